"""`stabfix verify` on the seed fixtures (fixtures/*/stabfix.yaml), CPU only.

Each fixture is verified twice: the first run's report is checked against what the fixture's README
says verify must see, and the two reports must agree on every memory number (exact on CPU), loss,
gradient norm and check message. One test per fixture, so pytest-xdist never repeats a run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from test_verify_run import REPO, Run, RunPool, assert_same_step, cli

FIXTURES = [
    "cascade_transformer", "text_bridge_trainer", "entropy_probe", "recurrent_lm", "style_transfer", "classic_pitfalls_2",
]


@pytest.fixture(scope="module")
def fixture_runs(tmp_path_factory):
    present = [f for f in FIXTURES if (REPO / "fixtures" / f / "stabfix.yaml").is_file()]
    specs = {f"{f}-{i}": ([f"fixtures/{f}"], REPO) for f in present for i in (1, 2)}
    pool = RunPool(specs, tmp_path_factory.mktemp("verify_fixtures"), list(specs))
    yield pool
    pool.pool.shutdown(wait=True)


def _check(report: dict, name: str) -> dict:
    return next(c for c in report["checks"] if c["name"] == name)


def check_cascade_transformer(r: Run) -> None:
    assert r.code == 1, r.out + r.err
    rep = r.report
    first = rep["steps"][0]
    assert first["grad_norm"] >= 1e6
    assert first["top_params"][0][0] == "cascade_stages.1.output_proj.weight"
    budget = _check(rep, "grad norm")
    assert budget["status"] == "fail" and budget["top"] == "cascade_stages.1.output_proj.weight"
    assert "> budget 100 (step 1, top: cascade_stages.1.output_proj.weight)" in budget["message"]
    assert _check(rep, "gradients")["status"] == "fail"
    numerics = _check(rep, "numerics")
    assert numerics["status"] == "fail" and numerics["module"] == "target_encoder"
    assert "cascade_stages.1.output_proj.weight" in r.out and "module target_encoder" in r.out


def check_text_bridge_trainer(r: Run) -> None:
    assert r.code == 1, r.out + r.err
    rep = r.report
    growth = _check(rep, "memory growth")
    assert growth["status"] == "fail" and "TextCache._cache" in growth["message"]
    assert rep["summary"]["growth_bytes_per_step"] > 0
    assert "TextCache._cache" in rep["survivors"][0]["holders"]
    assert "TextCache._cache" in r.out


def check_entropy_probe(r: Run) -> None:
    assert r.code == 1, r.out + r.err
    check = _check(r.report, "trainable params")
    assert check["status"] == "fail" and check["message"].startswith("trainable_params ")
    assert r.report["params"]["trainable"] > 1024


def check_classic_pitfalls_2(r: Run) -> None:
    """Its bugs change what is learned and measured, not memory or numerics: verify passes."""
    assert r.code == 0, r.out + r.err
    assert r.report["params"]["trainable"] == 5508
    assert r.report["summary"]["growth_bytes_per_step"] == 0
    assert all(c["status"] != "fail" for c in r.report["checks"])


# Wall-clock checks depend on the machine's load (two verify children run at once under xdist); the
# README promises identical memory, loss and gradient numbers across runs, not identical timings.
TIMING_CHECKS = {"step time", "step time trend"}


def _deterministic_checks(report: dict) -> list[tuple[str, str, str]]:
    return [(c["name"], c["status"], c["message"]) for c in report["checks"] if c["name"] not in TIMING_CHECKS]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture(fixture_runs, fixture):
    """What the fixture's README says verify must see, and the same report on a second run."""
    if not (REPO / "fixtures" / fixture / "stabfix.yaml").is_file():
        pytest.skip(f"fixtures/{fixture} is not present")
    a, b = fixture_runs.get(f"{fixture}-1", f"{fixture}-2")
    assert a.code in (0, 1), a.out + a.err
    specific = globals().get(f"check_{fixture}")
    if specific is not None:
        specific(a)
    assert a.code == b.code
    assert len(a.report["steps"]) == len(b.report["steps"])
    for sa, sb in zip(a.report["steps"], b.report["steps"]):
        assert_same_step(sa, sb)
    assert _deterministic_checks(a.report) == _deterministic_checks(b.report)
    assert a.report["survivors"] == b.report["survivors"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_text_bridge_sf101_fix_lowers_peak_memory(tmp_path):
    """scan → apply → `verify --baseline HEAD`, the workflow the README promises, on seed 000's trainer:
    dropping `requires_grad_(True)` from the loss target removes its gradient from backward's peak,
    and changes no loss, gradient or parameter count."""
    project = tmp_path / "text_bridge_trainer"
    shutil.copytree(REPO / "fixtures" / "text_bridge_trainer", project)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "seed"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True, timeout=600)
    fixed = subprocess.run(
        [sys.executable, "-m", "stabfix", "apply", "--select", "SF101", str(project)],
        capture_output=True, text=True, timeout=600,
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "requires_grad_(True)" not in (project / "energy_trainer.py").read_text()

    r = cli([str(project), "--baseline", "HEAD"], cwd=tmp_path, json_path=tmp_path / "report.json")
    assert r.code == 1, r.out + r.err  # the cache still grows: SF101 alone does not fix SF102
    rows = {row["metric"]: row for row in r.report["comparison"]}
    peak = rows["peak_memory_bytes"]
    assert peak["verdict"] == "better" and peak["current"] < peak["baseline"]
    assert rows["peak_backward_bytes"]["verdict"] == "better"
    for same in ("loss_last", "grad_norm_max", "trainable_params"):
        assert rows[same]["verdict"] == "same", rows[same]
    assert "before/after: HEAD → working tree" in r.out
