"""The fixtures: scanned findings match their README tables exactly, and
`apply --unsafe-fixes` fixes them without breaking the training step."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import json_report
from stabfix.catalog import load_catalog

REPO = Path(__file__).resolve().parent.parent
FIXTURES = sorted(path.parent for path in (REPO / "fixtures").glob("*/README.md"))
# Every shipped rule, including any shipped off by default: a README row of a rule that is not
# shipped yet (a later wave) is not checked until the rule lands.
SHIPPED = tuple(sorted(load_catalog()))
FIXABLE = tuple(code for code in SHIPPED if load_catalog()[code].fix_safety != "none")
_ROW = re.compile(r"^\|\s*(SF\d{3})\s*\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|")


def planted(fixture: Path) -> set[tuple[str, str, int]]:
    rows = set()
    for line in (fixture / "README.md").read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match and match.group(1) in SHIPPED:
            rows.add((match.group(1), match.group(2), int(match.group(3))))
    return rows


def scanned(run_cli, fixture: Path) -> set[tuple[str, str, int]]:
    result = run_cli("scan", ".", "--select", ",".join(SHIPPED), "--output-format", "json", "--no-cache", cwd=fixture)
    report = json_report(result)
    assert report["errors"] == []
    return {(f["code"], f["path"], f["line"]) for f in report["findings"]}


def run_steps(fixture: Path, steps: int = 3) -> subprocess.CompletedProcess:
    entry = yaml.safe_load((fixture / "stabfix.yaml").read_text())["verify"]["entry"]
    module, function = entry.split(":")
    code = (
        "import importlib, sys, math\n"
        f"sys.path.insert(0, {str(fixture)!r})\n"
        f"build = getattr(importlib.import_module({module!r}), {function!r})\n"
        "result = build('cpu')\n"
        "step = result[-1]\n"
        f"for _ in range({steps}):\n"
        "    print(float(step()))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_there_are_eight_fixtures():
    assert [path.name for path in FIXTURES] == [
        "cascade_transformer", "classic_pitfalls", "classic_pitfalls_2", "ddp_trainer", "entropy_probe", "recurrent_lm",
        "style_transfer", "text_bridge_trainer",
    ]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.name)
def test_scan_reports_exactly_the_planted_findings(run_cli, fixture):
    assert scanned(run_cli, fixture) == planted(fixture)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.name)
def test_unsafe_apply_fixes_every_fixable_finding_and_the_step_still_runs(run_cli, fixture, tmp_path):
    before = run_steps(fixture)
    assert before.returncode == 0, before.stderr
    copy = tmp_path / fixture.name
    shutil.copytree(fixture, copy, ignore=shutil.ignore_patterns("__pycache__", ".stabfix_cache"))
    first = run_cli("apply", ".", "--select", ",".join(SHIPPED), "--unsafe-fixes", cwd=copy)
    assert "Traceback" not in first.stderr
    remaining = scanned(run_cli, copy)
    fixable = {row for row in planted(fixture) if row[0] in FIXABLE}
    assert not (remaining & fixable), f"left after apply: {remaining & fixable}"
    for source in copy.rglob("*.py"):
        compile(source.read_text(encoding="utf-8"), str(source), "exec")
    snapshot = {path: path.read_bytes() for path in copy.rglob("*.py")}
    run_cli("apply", ".", "--select", ",".join(SHIPPED), "--unsafe-fixes", cwd=copy)
    assert {path: path.read_bytes() for path in copy.rglob("*.py")} == snapshot, "second apply changed files"
    after = run_steps(copy)
    assert after.returncode == 0, after.stderr


# What classic_pitfalls_2's README says its planted bugs do at run time, measured on the fixture and on
# a copy after `apply --unsafe-fixes`: one verify step (4 micro-batches, one optimizer step), then two
# evaluations of the same model on the same validation set.
_PITFALLS_2_PROBE = """
import json, sys
import torch
sys.path.insert(0, {project!r})
import train
torch.manual_seed(0)
model, optimizer, step = train.build_verify("cpu")
step()
cleared = all(p.grad is None for p in model.parameters())
_, val_set = train.make_data()
first, _ = train.evaluate(model, val_set, "cpu")
second, _ = train.evaluate(model, val_set, "cpu")
print(json.dumps({{
    "lr": optimizer.param_groups[0]["lr"],
    "cleared_after_step": cleared,
    "grads_after_evaluate": [p.grad is not None for p in model.parameters()],
    "eval_losses": [first, second],
}}))
"""


def _probe_pitfalls_2(project: Path) -> dict:
    probe = subprocess.run([sys.executable, "-c", _PITFALLS_2_PROBE.format(project=str(project))],
                           capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout.strip().splitlines()[-1])


def _cosine_lr(base: float, steps: int, t_max: int = 100) -> float:
    return base * (1 + math.cos(math.pi * steps / t_max)) / 2


def test_classic_pitfalls_2_runtime_effects_before_and_after_unsafe_apply(run_cli, tmp_path):
    fixture = REPO / "fixtures" / "classic_pitfalls_2"
    before = _probe_pitfalls_2(fixture)
    # SF418: one optimizer step advanced the cosine schedule by four micro-batches
    assert before["lr"] == pytest.approx(_cosine_lr(3e-3, 4))
    # SF414: dropout stays on after model.eval(), so the same model scores the same data differently
    assert before["eval_losses"][0] != before["eval_losses"][1]
    # SF419: the step cleared the gradients; evaluate() leaves new ones for the next training step to add to
    assert before["cleared_after_step"] and all(before["grads_after_evaluate"])

    copy = tmp_path / fixture.name
    shutil.copytree(fixture, copy, ignore=shutil.ignore_patterns("__pycache__", ".stabfix_cache"))
    run_cli("apply", ".", "--select", ",".join(SHIPPED), "--unsafe-fixes", cwd=copy)
    after = _probe_pitfalls_2(copy)
    assert after["lr"] == pytest.approx(_cosine_lr(3e-3, 1))
    assert after["eval_losses"][0] == after["eval_losses"][1]
    assert all(after["grads_after_evaluate"]), "SF419 has no automatic fix: evaluate() still leaves gradients"
