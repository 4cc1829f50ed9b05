"""`stabfix verify --nproc-per-node N -- python train.py`: the torchrun launch, the per-rank report and
the cross-rank checks on real 2-rank gloo runs (CPU), and that no process outlives a run."""

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from stabfix.verify import proctree
from stabfix.verify.torchrun import LaunchError, from_torchrun, last_stack, torchrun_command, where_stuck

SCRIPTS = Path(__file__).parent / "verify_scripts" / "ddp"

DUMP = """epoch 0 loss 5.4271
Thread 0x00007f00aaaa0700 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait

Current thread 0x00007efe8f296b80 (most recent call first):
  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5356 in barrier
  File "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/home/u/proj/train.py", line 57 in main
  File "/home/u/proj/train.py", line 63 in <module>
"""


def test_the_command_is_rewritten_for_torchrun(tmp_path):
    assert torchrun_command(["python", "-u", "train.py", "--lr", "1"], 2, tmp_path) == [
        "python", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
        "--log-dir", str(tmp_path), "--tee", "3", "train.py", "--lr", "1"]
    assert torchrun_command(["/v/bin/python3.11", "-m", "pkg.train"], 4, tmp_path)[-2:] == ["-m", "pkg.train"]
    for bad in (["bash", "run.sh"], ["torchrun", "train.py"], ["python", "-c", "print()"]):
        with pytest.raises(LaunchError):
            torchrun_command(bad, 2, tmp_path)


def test_a_stuck_rank_is_placed_at_its_own_line():
    frames = last_stack(DUMP)
    assert [f["line"] for f in frames] == [63, 57, 83, 5356]  # most recent call last, main thread only
    assert where_stuck(frames) == "train.py:57 in main, inside torch.distributed.distributed_c10d barrier"


def test_nproc_without_a_command_is_a_one_line_error(run_cli, tmp_path):
    result = run_cli("verify", str(tmp_path), "--entry", "train:build", "--nproc-per-node", "2")
    assert result.returncode == 2 and "--nproc-per-node" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("verify", str(tmp_path), "--nproc-per-node", "2", "--", "bash", "run.sh")
    assert result.returncode == 2 and "torchrun" in result.stderr and "Traceback" not in result.stderr


def test_kill_tree_reaches_processes_in_sessions_of_their_own():
    # a parent whose child starts a grandchild in a new session, as torchrun starts its workers
    code = ("import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
            "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 20
    while len(proctree.descendants(proc.pid)) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    found = proctree.kill_tree(proc.pid)
    proc.wait(timeout=10)
    assert len(found) == 2
    assert proctree.alive(found) == []


PY_DIR = os.path.dirname(sys.executable)


def _verify(workdir: Path, name: str, script_args: list[str], *flags: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = workdir / f"{name}.json"
    # `python` as users type it, found on PATH: this environment's
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "160",
           "PATH": PY_DIR + os.pathsep + os.environ.get("PATH", "")}
    if name in TYPED_AS_TORCHRUN:  # the user's own torchrun line, no --nproc-per-node for stabfix
        launch = ["--", "torchrun", "--nproc-per-node=2", "--master-port", "29533", *script_args]
    else:
        launch = ["--nproc-per-node", "2", "--", "python", *script_args]
    cmd = [sys.executable, "-m", "stabfix", "verify", str(workdir), "--json", str(out), *flags, *launch]
    result = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=400)
    return result, (json.loads(out.read_text()) if out.exists() else None)


TYPED_AS_TORCHRUN = {"no_sampler"}
RUNS = {
    # first: it mostly waits out its 60 s timeout, while the other runs take turns beside it
    "hang": (["train_hang.py"], ["--steps", "8", "--warmup", "1", "--timeout", "60"]),
    "leak": (["train.py", "--leak"], ["--steps", "8", "--exact-steps", "all", "--timeout", "240"]),
    "unsynced": (["train_unsynced_param.py"], ["--steps", "5", "--warmup", "1", "--timeout", "240"]),
    "no_sampler": (["train_no_sampler.py"], ["--steps", "5", "--warmup", "1", "--timeout", "240"]),
    "dies": (["train_rank_dies.py"], ["--steps", "5", "--warmup", "1", "--timeout", "240"]),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ddp")
    for path in SCRIPTS.glob("*.py"):
        shutil.copy(path, folder)
    return folder


@pytest.fixture(scope="module")
def runs(workdir):
    """The real 2-rank runs, two at a time (each is torchrun and two workers), and the fixed script's run
    against the leak's report as baseline, once that report is written."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_verify, workdir, name, script, *flags) for name, (script, flags) in RUNS.items()}

        def fixed():  # queued after "leak", so waiting for it cannot take the pool's last free thread
            futures["leak"].result()
            return _verify(workdir, "fixed", ["train.py"], "--steps", "8", "--exact-steps", "all", "--timeout", "240",
                           "--baseline", str(workdir / "leak.json"))

        futures["fixed"] = pool.submit(fixed)
        return {name: future.result() for name, future in futures.items()}


def _cross(report):
    return {c["name"]: c for c in report["ranks"]["checks"]}


def test_a_planted_leak_is_caught_on_every_rank_at_the_users_line(runs):
    result, report = runs["leak"]
    assert result.returncode == 1, result.stdout + result.stderr
    names = {c["name"]: c for c in report["checks"]}
    assert names["memory growth"]["status"] == "fail" and names["rank 1: memory growth"]["status"] == "fail"
    line = next(i for i, text in enumerate((SCRIPTS / "train.py").read_text().splitlines(), 1)
                if "predictions = model(inputs)" in text)
    for rank in ("0", "1"):
        top = report["ranks"]["reports"][rank]["survivors"][0]
        assert (top["file"], top["line"], top["phase"]) == ("train.py", line, "forward")
    # in sync and on different data all along: the leak is per rank, not a desync
    assert {c["status"] for c in report["ranks"]["checks"]} == {"pass"}


def test_the_fixed_ddp_script_passes_with_cross_rank_checks_and_beats_the_leak(runs):
    result, report = runs["fixed"]
    assert result.returncode == 0, result.stdout + result.stderr
    cross = _cross(report)
    assert {cross[n]["status"] for n in ("gradients reduced", "parameters in sync", "different samples")} == {"pass"}
    assert cross["parameters in sync"]["steps"] == 8
    assert "sample order" not in cross  # set_epoch(epoch) reshuffles: step 5 (epoch 1) is new data
    assert all(s["state"] == "ok" and s["steps_done"] == 8 for s in report["ranks"]["states"].values())
    assert report["ranks"]["left_running"] == []
    assert "rank 1" in result.stdout and "ranks: parameters in sync" in result.stdout
    rows = {row["metric"]: row for row in report["comparison"]}
    assert rows["failed_checks"]["verdict"] == "better" and rows["live_end_bytes"]["verdict"] == "better"
    assert report["summary"]["growth_bytes_per_step"] == 0 < report["baseline"]["report"]["summary"]["growth_bytes_per_step"]


def test_a_parameter_outside_ddp_fails_naming_rank_1(runs):
    result, report = runs["unsynced"]
    assert result.returncode == 1, result.stdout + result.stderr
    check = _cross(report)["parameters in sync"]
    assert check["status"] == "fail" and check["ranks"] == [1] and check["step"] == 1
    assert check["parameters"] == ["optimizer parameter #4 [1] (in no module)"]  # the DDP model's own stay in sync
    assert _cross(report)["gradients reduced"]["ranks"] == [1]


def test_a_missing_distributed_sampler_fails_as_same_samples(runs):
    result, report = runs["no_sampler"]
    assert result.returncode == 1, result.stdout + result.stderr
    check = _cross(report)["different samples"]
    assert check["status"] == "fail" and check["ranks"] == [0, 1] and check["steps"] == [1, 2, 3, 4, 5]
    assert _cross(report)["parameters in sync"]["status"] == "pass"  # in sync, on the same data
    # typed as `torchrun --nproc-per-node=2 --master-port 29533 train_no_sampler.py`: every rank reported,
    # as with --nproc-per-node 2, and the option not passed on is named
    assert report["settings"]["nproc_per_node"] == 2 and report["settings"]["run"][1:] == ["train_no_sampler.py"]
    assert sorted(report["ranks"]["reports"]) == ["0", "1"]
    assert "torchrun command: verifying its 2 rank(s)" in result.stdout and "--master-port" in result.stdout


def test_a_torchrun_command_is_read_with_torchruns_own_parser(tmp_path):
    assert from_torchrun(["torchrun", "--standalone", "--nproc_per_node", "4", "-m", "pkg.train", "--lr", "1"])[1:] == (
        4, [])
    worker, nproc, dropped = from_torchrun(["/env/bin/python", "-m", "torch.distributed.run", "--nproc-per-node=2",
                                            "--max-restarts", "3", "train.py", "--epochs", "1"])
    assert (worker, nproc, dropped) == (["/env/bin/python", "train.py", "--epochs", "1"], 2, ["max-restarts"])
    assert from_torchrun(["python", "train.py"]) is None
    for bad, said in ((["torchrun", "--nnodes", "2", "train.py"], "--nnodes 2"),
                      (["torchrun", "--nproc-per-node", "gpu", "train.py"], "not a number"),
                      (["torchrun", "--no-python", "bash", "x.sh"], "--no-python"),
                      (["torchrun", "--bogus", "train.py"], "--bogus")):
        with pytest.raises(LaunchError, match=said):
            from_torchrun(bad)


def test_a_torchrun_command_and_a_different_nproc_flag_is_a_one_line_error(run_cli, tmp_path):
    (tmp_path / "train.py").write_text("print('never run')\n")
    result = run_cli("verify", str(tmp_path), "--nproc-per-node", "3", "--", "torchrun", "--nproc-per-node", "2",
                     "train.py")
    assert result.returncode == 2 and "disagree" in result.stderr and "Traceback" not in result.stderr


def test_a_hung_rank_is_reported_with_its_step_and_stack_and_nothing_survives(runs):
    result, report = runs["hang"]
    assert result.returncode == 2, result.stdout + result.stderr
    states = report["ranks"]["states"]
    hung = states["1"]
    assert hung["state"] == "hung" and hung["step"] == 5  # after the 4 steps of epoch 0
    assert "train_hang.py:57 in main, inside torch.distributed.distributed_c10d barrier" in hung["message"]
    assert "train_hang.py\", line 57" in hung["stack"]
    assert states["0"]["state"] == "hung" and "train_hang.py:51" in states["0"]["message"]  # DDP's all-reduce
    assert report["ranks"]["left_running"] == []
    # checked here too, not only by verify: both stuck workers are gone (torchrun ran them in sessions of
    # their own, so killing torchrun's process group alone would have left them waiting forever)
    workers = [state["pid"] for state in states.values()]
    assert len(set(workers)) == 2 and all(workers) and proctree.alive(workers) == []
    assert "rank 1 hung in step 5" in result.stdout


def test_a_rank_that_dies_is_blamed_with_its_traceback(runs):
    result, report = runs["dies"]
    assert result.returncode == 2, result.stdout + result.stderr
    died = report["ranks"]["states"]["1"]
    assert died["state"] == "died" and died["step"] == 3 and died["steps_done"] == 2
    assert "ValueError: corrupt record in this batch" in died["stack"]
    assert report["error"]["rank"] == 1  # torchrun's first failure, not rank 0 that lost its peer after it
    assert report["ranks"]["states"]["0"]["state"] != "ok"
    assert report["ranks"]["left_running"] == []


def test_nproc_per_node_in_the_config_needs_a_command_and_a_positive_count():
    from stabfix.verify.settings import SettingsError, resolve_settings

    assert resolve_settings({"run": "python train.py", "nproc_per_node": 2}, {}).nproc_per_node == 2
    assert resolve_settings({"run": "python train.py"}, {"nproc_per_node": 4}).nproc_per_node == 4
    for section in ({"run": "python train.py", "nproc_per_node": 0}, {"entry": "train:build", "nproc_per_node": 2},
                    {"run": "python train.py", "nproc_per_node": "two"}):
        with pytest.raises(SettingsError, match="nproc_per_node"):
            resolve_settings(section, {})


def test_rank_states_from_what_each_rank_left():
    from stabfix.verify.rank_runs import _state
    from stabfix.verify.runner import RunResult

    def run(steps, **extra):
        return RunResult(ready={"type": "ready"}, steps=[{"step": n} for n in range(1, steps + 1)], **extra)

    late = _state(1, run(3), "still running after the other ranks had finished", last_stack(DUMP), None, None)
    assert late["state"] == "hung" and late["step"] == 4
    assert late["message"] == ("rank 1 hung in step 4 at train.py:57 in main, inside "
                               "torch.distributed.distributed_c10d barrier; still running after the other ranks had finished")
    stopped = _state(0, run(2), None, [], -15, 1)
    assert stopped["state"] == "stopped" and "after rank 1 failed" in stopped["message"] and "SIGTERM" in stopped["message"]
    crashed = _state(1, run(2), None, [], -9, 1)
    assert crashed["state"] == "died" and "killed by SIGKILL in step 3" in crashed["message"]
    done = _state(0, run(5, done={"stopped_by_stabfix": True}), None, [], None, None)
    assert done["state"] == "ok" and done["steps_done"] == 5
