"""`stabfix verify -- python script.py`: unmodified training scripts (tests/verify_scripts), each a real
run of the CLI, which starts the script under the bootstrap and stops it after --steps optimizer steps.

Each run starts when its test first asks for it (a module fixture keeps it for the others).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "tests" / "verify_scripts"
PY = sys.executable


@dataclass
class Run:
    code: int
    out: str
    err: str
    report: dict | None


def verify(args: list[str], json_path: Path, cwd: Path = REPO, env: dict | None = None) -> Run:
    # one intra-op thread: tiny steps on a busy machine; memory numbers do not depend on it
    full_env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "160", "OMP_NUM_THREADS": "1", **(env or {})}
    cmd = [sys.executable, "-m", "stabfix", "verify", "--json", str(json_path), *args]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=full_env, timeout=300)
    report = json.loads(json_path.read_text()) if json_path.exists() else None
    return Run(done.returncode, done.stdout, done.stderr, report)


RUNS: dict[str, list[str]] = {
    "plain": [str(SCRIPTS), "--steps", "6", "--", PY, "plain_loop.py", "--lr", "0.01"],
    "leak": [str(SCRIPTS), "--steps", "8", "--", PY, "plain_loop.py", "--leak"],
    "lbfgs": [str(SCRIPTS), "--steps", "4", "--warmup", "1", "--exact-steps", "all", "--", PY, "lbfgs_closure.py"],
    "gan": [str(SCRIPTS), "--steps", "6", "--", PY, "gan_two_optimizers.py"],
    "ppo_spike": [str(SCRIPTS), "--steps", "6", "--budget", "grad_norm=50", "--", PY, "ppo_epochs.py", "--spike"],
    "early": [str(SCRIPTS), "--steps", "6", "--", PY, "exits_early.py"],
    "raises": [str(SCRIPTS), "--steps", "6", "--", PY, "raises.py"],
    "hangs": [str(SCRIPTS), "--steps", "6", "--timeout", "30", "--", PY, "hangs.py"],
    "workers": [str(SCRIPTS), "--steps", "12", "--", PY, "loader_workers.py"],
    "launched": [str(SCRIPTS), "--steps", "4", "--", PY, "launcher.py", "plain_loop.py"],
    "launched_raises": [str(SCRIPTS), "--steps", "6", "--", PY, "launcher.py", "raises.py"],
    "nested": [str(SCRIPTS), "--steps", "4", "--warmup", "1", "--", PY, "nested_optimizer.py"],
    "no_step": [str(SCRIPTS), "--", PY, "-c", "import torch; print('no training here')"],
}


class _LazyRuns(dict):
    """Each run starts when a test first asks for it (under xdist, only on the worker that needs it)."""

    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out = out

    def __missing__(self, name: str) -> Run:
        run = self[name] = verify(RUNS[name], self.out / f"{name}.json")
        return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return _LazyRuns(tmp_path_factory.mktemp("command_runs"))


def _check(report: dict, name: str) -> dict | None:
    return next((c for c in report["checks"] if c["name"] == name), None)


def test_plain_loop_runs_unmodified_and_is_stopped_after_the_steps(runs: dict[str, Run]) -> None:
    r = runs["plain"]
    assert r.code == 0, r.out + r.err
    rep = r.report
    assert [s["step"] for s in rep["steps"]] == [1, 2, 3, 4, 5, 6]
    assert rep["command"] == {"argv": [PY, "plain_loop.py", "--lr", "0.01"], "stopped_by_stabfix": True,
                              "steps_seen": 6}
    assert "stabfix stopped" in r.out and "after 6 optimizer step(s)" in r.out
    assert "trained" not in r.out  # the script's code after the last step did not run
    # every step: the loss backward() saw, the gradient norm at the optimizer step, one optimizer step
    assert all(s["loss"] is not None and s["grad_norm"] > 0 and s["optimizer_steps"] == 1 for s in rep["steps"])
    assert rep["params"]["total"] == 16 * 32 + 32 + 32 + 1
    assert rep["steps"][0]["top_params"][0][0].endswith(("weight", "bias"))
    assert _check(rep, "memory growth")["status"] == "pass"


def test_planted_leak_is_caught_and_attributed_to_the_users_line(runs: dict[str, Run]) -> None:
    r = runs["leak"]
    assert r.code == 1, r.out + r.err
    growth = _check(r.report, "memory growth")
    assert growth["status"] == "fail"
    lines = (SCRIPTS / "plain_loop.py").read_text().splitlines()
    created = next(i for i, text in enumerate(lines, 1) if "prediction = model(x)" in text)
    top = r.report["survivors"][0]
    # created by the script's forward line, held by the list it is appended to
    assert (top["file"], top["line"], top["phase"]) == ("plain_loop.py", created, "forward")
    assert top["holders"] == ["__main__.history"]
    assert "held by __main__.history" in growth["message"]


def test_fixed_script_passes_against_the_leaky_report(runs: dict[str, Run], tmp_path: Path) -> None:
    saved = tmp_path / "leaky.json"
    saved.write_text(json.dumps(runs["leak"].report))
    r = verify([str(SCRIPTS), "--steps", "8", "--baseline", str(saved), "--", PY, "plain_loop.py"],
               tmp_path / "fixed.json")
    assert r.code == 0, r.out + r.err
    rows = {row["metric"]: row for row in r.report["comparison"]}
    assert rows["growth_bytes_per_step"]["verdict"] == "better"
    assert rows["failed_checks"]["verdict"] == "better"


def test_lbfgs_closure_is_read_after_the_closure(runs: dict[str, Run]) -> None:
    r = runs["lbfgs"]
    assert r.code == 0, r.out + r.err
    first = r.report["steps"][0]
    assert first["grad_norm"] is not None and first["grad_norm"] > 0
    assert len(first["grad_norms"]) > 1  # LBFGS evaluates the closure several times a step
    assert _check(r.report, "unused parameters") is None
    # the closure's backward is backward, not optimizer
    assert all(s["phase_peak_bytes"]["backward"] for s in r.report["steps"][1:])


def test_gan_steps_are_the_two_optimizers_steps(runs: dict[str, Run]) -> None:
    r = runs["gan"]
    assert r.code == 0, r.out + r.err
    tops = [s["top_params"][0][0].split(".")[0] for s in r.report["steps"]]
    assert tops == ["discriminator", "generator"] * 3
    assert r.report["params"]["trainable_not_in_optimizer"] == 0


def test_every_ppo_optimizer_step_is_checked_against_the_budget(runs: dict[str, Run]) -> None:
    r = runs["ppo_spike"]
    assert r.code == 1, r.out + r.err
    over = _check(r.report, "grad norm")
    assert over["status"] == "fail" and over["step"] == 1


def test_forked_dataloader_workers_do_not_report(runs: dict[str, Run]) -> None:
    r = runs["workers"]
    assert r.code == 0, r.out + r.err
    assert [s["step"] for s in r.report["steps"]] == list(range(1, 13))


def test_an_optimizer_stepping_another_is_one_step(runs: dict[str, Run]) -> None:
    r = runs["nested"]
    assert r.code == 0, r.out + r.err
    steps = r.report["steps"]
    assert [s["step"] for s in steps] == [1, 2, 3, 4]
    assert all(s["loss"] is not None and s["grad_norm"] > 0 for s in steps)


def test_command_that_ends_early_is_reported_for_what_it_ran(runs: dict[str, Run]) -> None:
    r = runs["early"]
    assert r.code == 0, r.out + r.err
    assert len(r.report["steps"]) == 3
    assert r.report["command"]["stopped_by_stabfix"] is False
    warn = _check(r.report, "steps")
    assert warn["status"] == "warn" and "after 3 optimizer step(s), fewer than the 6" in warn["message"]


def test_command_that_raises_shows_the_users_traceback(runs: dict[str, Run]) -> None:
    r = runs["raises"]
    assert r.code == 2
    err = r.report["error"]
    assert err["message"] == "the command raised ValueError: corrupt batch at iteration 3 in step 4"
    assert 'raises.py", line 8, in check_batch' in err["traceback"]
    assert "stabfix" not in err["traceback"].replace(str(SCRIPTS), "")
    assert len(r.report["steps"]) == 3


def test_a_launcher_s_child_is_verified_and_its_failure_is_the_one_reported(runs: dict[str, Run]) -> None:
    ok = runs["launched"]
    assert ok.code == 0, ok.out + ok.err
    assert len(ok.report["steps"]) == 4 and ok.report["params"]["total"] == 16 * 32 + 32 + 32 + 1
    failed = runs["launched_raises"]
    assert failed.code == 2
    # the worker's exception, not the launcher's CalledProcessError that followed it
    assert failed.report["error"]["message"] == "the command raised ValueError: corrupt batch at iteration 3 in step 4"


def test_command_that_hangs_times_out_with_its_stack(runs: dict[str, Run]) -> None:
    r = runs["hangs"]
    assert r.code == 2
    err = r.report["error"]
    assert err["kind"] == "timeout" and err["step"] == 3
    assert "in wait_for_data" in err["traceback"]


def test_command_without_an_optimizer_step_is_an_error(runs: dict[str, Run]) -> None:
    r = runs["no_step"]
    assert r.code == 2
    assert "without calling optimizer.step()" in r.report["error"]["message"]
    assert "no training here" in r.out


def test_the_environments_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "marker.txt"
    (site / "sitecustomize.py").write_text(  # counts the runs in the command's processes only
        f"import os\nif os.environ.get('STABFIX_VERIFY_EVENTS'): open({str(marker)!r}, 'a').write('ran\\n')\n")
    r = verify([str(SCRIPTS), "--steps", "3", "--", PY, "exits_early.py"], tmp_path / "r.json",
               env={"PYTHONPATH": f"{REPO}{os.pathsep}{site}"})
    assert r.code == 0, r.out + r.err
    assert marker.read_text() == "ran\n"


def test_entry_and_command_together_is_a_one_line_error(tmp_path: Path) -> None:
    r = verify([str(SCRIPTS), "--entry", "train:build", "--", PY, "plain_loop.py"], tmp_path / "r.json")
    assert r.code == 2
    assert r.err.strip().splitlines() == ["error: give either --entry or a command after --, not both"]


def test_run_from_the_config_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text((SCRIPTS / "exits_early.py").read_text())
    (project / "stabfix.yaml").write_text(f"verify:\n  run: '{PY} train.py'\n  steps: 2\n  warmup: 1\n")
    r = verify([str(project)], tmp_path / "r.json")
    assert r.code == 0, r.out + r.err
    assert r.report["settings"]["run"] == [PY, "train.py"]
    assert r.report["command"]["stopped_by_stabfix"] is True


# -- settings: the command from the config or after `--` (no run) ------------------------------------
from stabfix.verify.settings import FlagError, SettingsError, resolve_settings  # noqa: E402


def test_config_run_is_split_like_a_shell_or_taken_as_a_list() -> None:
    as_text = resolve_settings({"run": "python train.py --lr 1e-3 --name 'a b'"}, {})
    assert as_text.run == ["python", "train.py", "--lr", "1e-3", "--name", "a b"] and as_text.entry is None
    assert resolve_settings({"run": ["python", "train.py"]}, {}).run == ["python", "train.py"]


def test_a_flag_replaces_the_configs_choice_and_both_on_one_level_is_an_error() -> None:
    assert resolve_settings({"entry": "train:build"}, {"run": ["python", "t.py"]}).run == ["python", "t.py"]
    from_flag = resolve_settings({"run": "python t.py"}, {"entry": "train:build"})
    assert (from_flag.entry, from_flag.run) == ("train:build", None)
    with pytest.raises(FlagError, match="either --entry or a command"):
        resolve_settings({}, {"entry": "train:build", "run": ["python", "t.py"]})
    with pytest.raises(SettingsError, match="verify.entry and verify.run are both set"):
        resolve_settings({"entry": "train:build", "run": "python t.py"}, {})


@pytest.mark.parametrize("bad", ["", "   ", 3, ["python", 3], "python 'unclosed"])
def test_a_bad_run_value_names_the_key(bad: object) -> None:
    with pytest.raises(SettingsError, match="verify.run"):
        resolve_settings({"run": bad}, {})


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_baseline_head_runs_the_same_command_in_the_committed_tree(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True, timeout=600)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    project = tmp_path / "proj"
    project.mkdir()
    leaky = (SCRIPTS / "plain_loop.py").read_text().replace("if args.leak:", "if True:")
    (project / "train.py").write_text(leaky)
    (project / "stabfix.yaml").write_text(f"verify:\n  run: [{PY!r}, train.py]\n  steps: 6\n  warmup: 2\n")
    git("add", "-A")
    git("commit", "-q", "-m", "leaky")
    (project / "train.py").write_text((SCRIPTS / "plain_loop.py").read_text())  # the fix: no --leak, no leak
    r = verify([str(project), "--baseline", "HEAD"], tmp_path / "r.json")
    assert r.code == 0, r.out + r.err
    assert r.report["baseline"]["report"]["exit_code"] == 1  # HEAD leaks
    rows = {row["metric"]: row for row in r.report["comparison"]}
    assert rows["growth_bytes_per_step"]["verdict"] == "better"
    assert rows["total_params"]["verdict"] == "same"
