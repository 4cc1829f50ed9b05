"""fixtures/ddp_trainer under `stabfix verify --nproc-per-node 2`: the planted distributed bugs show up across
ranks at run time (SF501: every rank trains on the same batches; SF502: every epoch replays the first
epoch's order), and a copy fixed by `stabfix apply --unsafe-fixes` passes those checks. Real 2-rank gloo
runs on the CPU, two at a time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from stabfix.catalog import load_catalog

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "ddp_trainer"
PY_DIR = os.path.dirname(sys.executable)
ENV = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "160", "PATH": PY_DIR + os.pathsep + os.environ.get("PATH", ""),
       "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _stabfix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stabfix", *args], cwd=cwd, capture_output=True, text=True,
                          env=ENV, timeout=400)


def _verify(project: Path, script: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = project / f"{Path(script).stem}.verify.json"
    result = _stabfix("verify", str(project), "--nproc-per-node", "2", "--json", str(out), "--steps", "8",
                      "--warmup", "1", "--timeout", "240", "--", "python", script, cwd=project)
    return result, (json.loads(out.read_text()) if out.exists() else {})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The buggy fixture and a copy after `apply --unsafe-fixes`, each script verified on 2 ranks."""
    root = tmp_path_factory.mktemp("ddp_trainer")
    ignore = shutil.ignore_patterns("__pycache__", ".stabfix_cache")
    buggy, fixed = shutil.copytree(FIXTURE, root / "buggy", ignore=ignore), shutil.copytree(FIXTURE, root / "fixed", ignore=ignore)
    applied = _stabfix("apply", ".", "--select", ",".join(sorted(load_catalog())), "--unsafe-fixes", cwd=fixed)
    assert applied.returncode in (0, 1) and "Traceback" not in applied.stderr, applied.stderr
    jobs = {(kind, script): (project, script) for kind, project in (("buggy", buggy), ("fixed", fixed))
            for script in ("finetune.py", "train.py")}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(_verify, *job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _cross(report: dict) -> dict:
    return {check["name"]: check for check in report["ranks"]["checks"]}


def test_without_a_distributed_sampler_every_rank_trains_on_the_same_batches(runs):
    result, report = runs["buggy", "finetune.py"]
    assert result.returncode == 1, result.stdout + result.stderr
    cross = _cross(report)
    assert cross["different samples"]["status"] == "fail" and cross["different samples"]["ranks"] == [0, 1]
    assert cross["different samples"]["steps"] == list(range(1, 9))  # every step, both epochs
    assert cross["parameters in sync"]["status"] == "pass"  # one model, trained on copies of the same batch
    assert "ranks: different samples" in result.stdout


def test_without_set_epoch_the_second_epoch_replays_the_first_in_order(runs):
    result, report = runs["buggy", "train.py"]
    assert result.returncode == 0, result.stdout + result.stderr  # a warning, not a failure
    cross = _cross(report)
    assert cross["sample order"]["status"] == "warn"
    assert cross["different samples"]["status"] == "pass"  # the sampler does shard the data
    assert "repeat those from step 1 in the same order" in result.stdout


def test_the_copy_fixed_by_apply_passes_the_cross_rank_checks(runs):
    for script in ("finetune.py", "train.py"):
        result, report = runs["fixed", script]
        assert result.returncode == 0, result.stdout + result.stderr
        cross = _cross(report)
        assert cross["different samples"]["status"] == "pass", script
        assert cross["gradients reduced"]["status"] == cross["parameters in sync"]["status"] == "pass", script
        assert all(state["state"] == "ok" and state["steps_done"] == 8 for state in report["ranks"]["states"].values())
        assert report["ranks"]["left_running"] == []
    assert "sample order" not in _cross(runs["fixed", "train.py"][1])  # set_epoch(epoch) reshuffles each epoch
