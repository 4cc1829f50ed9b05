"""`stabfix verify` end to end on the small projects in tests/verify_cases (CPU only).

Every run is a real `python -m stabfix verify ...` (parent CLI + child process). They are started
together, a few at a time, by a module fixture; the tests then check one run each.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CASES = "tests/verify_cases"
MIB = 1024 * 1024


@dataclass
class Run:
    code: int
    out: str
    err: str
    report: dict | None


def cli(args: list[str], cwd: Path = REPO, json_path: Path | None = None) -> Run:
    # One intra-op thread: these steps are tiny, and on a busy machine OpenMP threads that spin-wait
    # for each other make them 10-100x slower. Memory numbers do not depend on it.
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "160", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    full = [sys.executable, "-m", "stabfix", "verify", *args]
    if json_path is not None:
        full += ["--json", str(json_path)]
    done = subprocess.run(full, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    report = json.loads(json_path.read_text()) if json_path is not None and json_path.exists() else None
    return Run(done.returncode, done.stdout, done.stderr, report)


RUNS: dict[str, list[str]] = {
    "leaky": [f"{CASES}/leaky"],
    "healthy": [f"{CASES}/healthy"],
    # the same run with budgets: also the second run for the stability check
    "over_budget": [f"{CASES}/healthy", "--budget", "trainable_params=100", "--budget", "peak_memory_mb=0.01"],
    "nan": [f"{CASES}/broken"],
    "explodes": [f"{CASES}/broken", "--entry", "train:explodes"],
    "entry_raises": [f"{CASES}/broken", "--entry", "train:entry_raises"],
    "step_raises": [f"{CASES}/broken", "--entry", "train:step_raises"],
    "hangs": [f"{CASES}/broken", "--entry", "train:hangs", "--timeout", "10"],
    "no_function": [f"{CASES}/broken", "--entry", "train:missing"],
    "no_module": [f"{CASES}/broken", "--entry", "nomod:build"],
    "crash": [f"{CASES}/broken", "--entry", "train:crash"],
    "wrong_return": [f"{CASES}/broken", "--entry", "train:wrong_return"],
}


class RunPool:
    """Starts `stabfix verify` runs in a few threads. Without pytest-xdist every run is started at
    once (they overlap); under xdist each worker starts only the runs its own tests ask for, so no
    run is repeated on two workers (every run below is used by exactly one test)."""

    def __init__(self, specs: dict[str, tuple[list[str], Path]], tmp: Path, prefetch: list[str]) -> None:
        self.specs, self.tmp = specs, tmp
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.futures: dict = {}
        if not os.environ.get("PYTEST_XDIST_WORKER"):
            for name in prefetch:
                self._submit(name)

    def _submit(self, name: str):
        if name not in self.futures:
            args, cwd = self.specs[name]
            self.futures[name] = self.pool.submit(cli, args, cwd, self.tmp / f"{name}.json")
        return self.futures[name]

    def get(self, *names: str) -> list[Run] | Run:
        futures = [self._submit(n) for n in names]
        results = [f.result() for f in futures]
        return results[0] if len(results) == 1 else results


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    specs = {name: (args, REPO) for name, args in RUNS.items()}
    order = ["hangs"] + [name for name in RUNS if name != "hangs"]  # the slowest first, to overlap
    pool = RunPool(specs, tmp_path_factory.mktemp("verify_runs"), order)
    yield pool
    pool.pool.shutdown(wait=True)


MEMORY_KEYS = ("start_live_bytes", "peak_bytes", "phase_peak_bytes", "live_end_bytes")


def _close(x, y) -> bool:
    if x is None or y is None or isinstance(x, str) or isinstance(y, str):
        return x == y
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return str(x) == str(y)
    return math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-9)


def assert_same_step(sa: dict, sb: dict) -> None:
    """Two runs of one seeded step: memory numbers identical; loss and gradient norms equal up to
    BLAS rounding (MKL results may differ in the last bits with buffer alignment between runs)."""
    for k in MEMORY_KEYS:
        assert sa[k] == sb[k], (sa["step"], k, sa[k], sb[k])
    for k in ("loss", "grad_norm"):
        assert _close(sa[k], sb[k]), (sa["step"], k, sa[k], sb[k])
    assert [n for n, _ in sa["top_params"]] == [n for n, _ in sb["top_params"]]
    assert all(_close(x, y) for (_, x), (_, y) in zip(sa["top_params"], sb["top_params"]))
    assert sa["nonfinite_grads_count"] == sb["nonfinite_grads_count"]
    assert sa["nonfinite_module"] == sb["nonfinite_module"]


def _check(report: dict, name: str) -> dict:
    return next(c for c in report["checks"] if c["name"] == name)


# -- accuracy -------------------------------------------------------------------------------------
def test_cpu_peak_and_growth_are_exact(runs):
    r = runs.get("leaky")
    assert r.code == 1, r.out + r.err
    rep = r.report
    assert rep["memory_source"] == "live tensors (dispatch)"
    # exact per-op accounting on the last step; the others sampled
    assert [s["step"] for s in rep["steps"] if s["exact"]] == [8]
    for s in rep["steps"]:
        if s["exact"]:
            # a 4 MiB temporary plus the 1 MiB kept, on top of what was live when the step started
            assert (s["peak_bytes"] - s["start_live_bytes"]) == pytest.approx(5 * MIB, rel=0.01)
            assert s["phase_peak_bytes"]["forward"] >= s["start_live_bytes"] + 4 * MIB
        else:  # a sampled step: no peak, but the live bytes at its boundaries are counted
            assert s["peak_bytes"] is None and set(s["phase_peak_bytes"].values()) == {None}
        assert s["live_end_bytes"] - s["start_live_bytes"] == pytest.approx(1 * MIB, rel=0.01)
    assert rep["summary"]["growth_bytes_per_step"] == pytest.approx(1 * MIB, rel=0.01)
    top = rep["survivors"][0]
    assert top["holders"] == ["History._kept"]
    assert (top["op"], top["file"], top["line"]) == ("aten.zeros", "train.py", 30)
    # steps 3-7 (after warm-up, before the last); two views per step, one storage each; made in
    # sampled steps, attributed to the site where the exact last step made the same storage
    assert top["bytes"] == 5 * MIB and top["steps"] == 5 and top["count"] == 5
    assert top["sampled"] == 5
    growth = _check(rep, "memory growth")
    assert growth["status"] == "fail"
    assert "+1.00 MiB/step" in growth["message"] and "History._kept" in growth["message"]
    assert "History._kept" in r.out and "memory grows every step" in r.out


def test_healthy_project_exact_stable_and_over_budget(runs):
    r, again = runs.get("healthy", "over_budget")  # the same project, the second run with budgets
    assert r.code == 0, r.out + r.err
    rep = r.report
    params = rep["params"]["total"]
    assert params == 6337 and rep["params"]["trainable"] == 6337
    first = rep["steps"][0]
    # step 1 creates the gradients and Adam's exp_avg and exp_avg_sq (3 x 4 bytes per parameter) plus a
    # 4-byte `step` tensor per parameter tensor (6 of them); the rest of the step is freed
    assert first["live_end_bytes"] - first["start_live_bytes"] == 3 * 4 * params + 6 * 4
    assert rep["summary"]["live_before_bytes"] == 4 * params + (64 * 32 + 64) * 4  # params + x + y
    assert all(s["live_end_bytes"] == first["live_end_bytes"] for s in rep["steps"])
    assert "verify passed" in r.out
    assert "forward" in r.out and "backward" in r.out and "optimizer" in r.out

    # stable: every memory number identical across the two runs (budgets do not change measuring)
    for sa, sb in zip(rep["steps"], again.report["steps"], strict=True):
        assert_same_step(sa, sb)

    # budgets exceeded: exit 1, each named
    assert again.code == 1
    trainable = _check(again.report, "trainable params")["message"]
    assert trainable.startswith("trainable_params 6,337 > budget 100")
    assert _check(again.report, "peak memory")["message"].startswith("peak_memory ")
    assert "trainable_params 6,337 > budget 100" in again.out


# -- health checks and budgets (exit 1) ----------------------------------------------------------
def test_nan_loss_fails(runs):
    r = runs.get("nan")
    assert r.code == 1
    loss = _check(r.report, "loss")
    assert loss["status"] == "fail" and loss["message"].startswith("loss is NaN at step 1")
    assert _check(r.report, "gradients")["status"] == "fail"
    assert "loss is NaN at step 1" in r.out
    assert "Traceback" not in r.out + r.err


def test_first_nonfinite_module_is_named(runs):
    r = runs.get("explodes")
    assert r.code == 1
    numerics = _check(r.report, "numerics")
    assert numerics["status"] == "fail"
    assert numerics["module"] == "1" and "(Amplify) at step 1" in numerics["message"]


# -- could not run (exit 2) ---------------------------------------------------------------------
def _assert_error(r: Run, needle: str) -> None:
    assert r.code == 2, r.out + r.err
    assert needle in r.out, r.out
    assert r.report["status"] == "error" and needle in r.report["error"]["message"]
    assert "stabfix/verify/" not in r.out and "stabfix/verify/" not in r.err  # never a stabfix traceback


def test_entry_that_raises(runs):
    r = runs.get("entry_raises")
    _assert_error(r, "train:entry_raises(cpu) raised RuntimeError: dataset shard 7 is missing")
    assert r.out.count("Traceback (most recent call last)") == 1
    assert "traceback from your code" in r.out and 'train.py", line 17, in entry_raises' in r.out


def test_step_that_raises(runs):
    r = runs.get("step_raises")
    _assert_error(r, "step 3 raised ValueError: bad batch at call 3")
    assert r.out.count("Traceback (most recent call last)") == 1
    assert len(r.report["steps"]) == 2


def test_step_that_hangs_times_out(runs):
    r = runs.get("hangs")
    _assert_error(r, "timed out after 10s")
    if "during step" in r.out:  # on a very slow machine the timeout may hit during the import
        assert "train.py" in r.out and "in step" in r.out


def test_missing_function_and_module(runs):
    no_function, no_module = runs.get("no_function", "no_module")
    _assert_error(no_function, "module 'train' has no function 'missing'")
    _assert_error(no_module, "entry module 'nomod' not found")
    assert "Traceback" not in no_module.out


def test_crash_and_wrong_return(runs):
    crash, wrong = runs.get("crash", "wrong_return")
    _assert_error(crash, "exited with code 7 during step 1")
    _assert_error(wrong, "must return (models, optimizers, step) or (models, step), got int")


def test_missing_verify_section(tmp_path):
    (tmp_path / "stabfix.yaml").write_text("select: [SF1]\n")
    r = cli([str(tmp_path)])
    assert r.code == 2
    assert "no verify entry" in r.err and "stabfix.yaml" in r.err


def test_unknown_keys_name_the_key(tmp_path):
    (tmp_path / "stabfix.yaml").write_text("verify:\n  entry: a:b\n  stpes: 3\n")
    r = cli([str(tmp_path)])
    assert r.code == 2 and "unknown key 'stpes'" in r.err
    (tmp_path / "stabfix.yaml").write_text("verify:\n  entry: a:b\n  budgets:\n    peak_mb: 3\n")
    r = cli([str(tmp_path)])
    assert r.code == 2 and "unknown budget 'peak_mb'" in r.err
    r = cli([str(tmp_path / "nowhere")])
    assert r.code == 2 and "no such file or directory" in r.err
