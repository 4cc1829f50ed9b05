"""The five seed fixtures: scanned findings match their README tables exactly, and
`apply --unsafe-fixes` fixes them without breaking the training step."""

from __future__ import annotations

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


def test_there_are_seven_fixtures():
    assert [path.name for path in FIXTURES] == [
        "cascade_transformer", "classic_pitfalls", "classic_pitfalls_2", "entropy_probe", "recurrent_lm",
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
