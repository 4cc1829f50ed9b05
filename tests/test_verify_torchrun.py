"""`stabfix verify --nproc-per-node N -- python train.py`: the torchrun launch, the per-rank report and
the cross-rank checks on real 2-rank gloo runs (CPU), and that no process outlives a run."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stabfix.verify import proctree
from stabfix.verify.torchrun import LaunchError, last_stack, torchrun_command, where_stuck

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
    assert result.returncode == 2 and "nproc_per_node" in result.stderr and "Traceback" not in result.stderr
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


def _verify(run_cli, tmp_path, script, *flags):
    for path in SCRIPTS.glob("*.py"):
        shutil.copy(path, tmp_path)
    out = tmp_path / "report.json"
    env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    result = run_cli("verify", str(tmp_path), "--nproc-per-node", "2", "--steps", "5", "--warmup", "1",
                     "--json", str(out), *flags, "--", "python", script, cwd=tmp_path, env=env)
    report = json.loads(out.read_text()) if out.exists() else None
    return result, report


def _cross(report):
    return {c["name"]: c for c in report["ranks"]["checks"]}


def test_a_clean_ddp_script_passes_with_the_cross_rank_checks(run_cli, tmp_path):
    result, report = _verify(run_cli, tmp_path, "train.py", "--timeout", "240")
    assert result.returncode == 0, result.stdout + result.stderr
    cross = _cross(report)
    assert {cross[n]["status"] for n in ("gradients reduced", "parameters in sync", "different samples")} == {"pass"}
    assert cross["parameters in sync"]["steps"] == 5
    assert sorted(report["ranks"]["states"]) == ["0", "1"]
    assert all(s["state"] == "ok" and s["steps_done"] == 5 for s in report["ranks"]["states"].values())
    assert report["ranks"]["left_running"] == []
    assert "rank 1" in result.stdout and "ranks: parameters in sync" in result.stdout


def test_a_parameter_outside_ddp_fails_naming_rank_1(run_cli, tmp_path):
    result, report = _verify(run_cli, tmp_path, "train_unsynced_param.py", "--timeout", "240")
    assert result.returncode == 1, result.stdout + result.stderr
    check = _cross(report)["parameters in sync"]
    assert check["status"] == "fail" and check["ranks"] == [1] and check["step"] == 1
    assert check["parameters"] == ["optimizer parameter #4 [1] (in no module)"]  # the DDP model's own stay in sync
    assert _cross(report)["gradients reduced"]["ranks"] == [1]


def test_a_missing_distributed_sampler_fails_as_same_samples(run_cli, tmp_path):
    result, report = _verify(run_cli, tmp_path, "train_no_sampler.py", "--timeout", "240")
    assert result.returncode == 1, result.stdout + result.stderr
    check = _cross(report)["different samples"]
    assert check["status"] == "fail" and check["ranks"] == [0, 1] and check["steps"] == [1, 2, 3, 4, 5]
    assert _cross(report)["parameters in sync"]["status"] == "pass"  # in sync, on the same data


def test_a_hung_rank_is_reported_with_its_step_and_stack_and_nothing_survives(run_cli, tmp_path):
    result, report = _verify(run_cli, tmp_path, "train_hang.py", "--timeout", "60")
    assert result.returncode == 2, result.stdout + result.stderr
    states = report["ranks"]["states"]
    hung = states["1"]
    assert hung["state"] == "hung" and hung["step"] == 5  # after the 4 steps of epoch 0
    assert "train_hang.py:57 in main, inside torch.distributed.distributed_c10d barrier" in hung["message"]
    assert "train_hang.py\", line 57" in hung["stack"]
    assert states["0"]["state"] == "hung" and "train_hang.py:51" in states["0"]["message"]  # DDP's all-reduce
    assert report["ranks"]["left_running"] == []
    assert "rank 1 hung in step 5" in result.stdout


def test_a_rank_that_dies_is_blamed_with_its_traceback(run_cli, tmp_path):
    result, report = _verify(run_cli, tmp_path, "train_rank_dies.py", "--timeout", "240")
    assert result.returncode == 2, result.stdout + result.stderr
    died = report["ranks"]["states"]["1"]
    assert died["state"] == "died" and died["step"] == 3 and died["steps_done"] == 2
    assert "ValueError: corrupt record in this batch" in died["stack"]
    assert report["error"]["rank"] == 1  # torchrun's first failure, not rank 0 that lost its peer after it
    assert report["ranks"]["states"]["0"]["state"] != "ok"
    assert report["ranks"]["left_running"] == []
