"""What each command loads: `--version`, `--help`, `rules` and `explain` never import the engine (libcst, the
model, the checkers) nor torch, and a re-scan served from the cache does not either, also when a cached
result consulted other files. The times are measured by bench/startup_speed.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import SF101_SOURCE, json_report, write
from stabfix.catalog import load_catalog
from test_project_scan import NETS_LOGITS, NETS_SOFTMAX, TRAIN

REPO = Path(__file__).resolve().parent.parent
# The engine and what only it needs; a command that imports none of them starts in a fraction of the time.
ENGINE = ("libcst", "torch", "stabfix.model", "stabfix.engine", "stabfix.checkers", "stabfix.fixer")

# Runs the command line as `python -m stabfix ARGS` does, then writes the names of the loaded modules.
# A scan ends its process without the interpreter's teardown (`os._exit`, stabfix.cli.main): the names are
# written there too.
PROBE = """
import json, os, runpy, sys
args, out = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["stabfix", *args]

def record():
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(sorted(sys.modules), handle)

def recording_exit(code, exit=os._exit, pid=os.getpid()):
    if os.getpid() == pid:  # not a forked worker ending
        record()
    exit(code)

os._exit = recording_exit
code = 0
try:
    runpy.run_module("stabfix", run_name="__main__", alter_sys=True)
except SystemExit as exit:
    code = exit.code
record()
sys.exit(code)
"""


def _run(tmp_path: Path, *args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args)), str(out)],
        cwd=cwd or tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )
    modules = set(json.loads(out.read_text(encoding="utf-8")))
    out.unlink()
    return result, modules


def _engine_modules(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == top or name.startswith(top + ".") for top in ENGINE))


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["rules"], ["explain", "SF101"], ["explain", "nope"]])
def test_the_commands_that_only_read_the_catalog_load_no_engine(tmp_path, args):
    result, modules = _run(tmp_path, *args)
    assert result.returncode == (2 if args[-1] == "nope" else 0), result.stderr
    assert "stabfix.cli" in modules
    assert _engine_modules(modules) == []


def test_a_rescan_served_from_the_cache_loads_no_engine_and_reports_the_same(tmp_path):
    project = tmp_path / "project"
    write(project, "lib/nets.py", NETS_SOFTMAX)
    write(project, "app/train.py", TRAIN)  # its SF410 finding consulted lib/nets.py
    write(project, "app/step.py", SF101_SOURCE)
    scan = ("scan", ".", "--output-format", "json")

    first, modules = _run(tmp_path, *scan, cwd=project)
    assert first.returncode == 1, first.stderr
    assert "libcst" in modules  # the files were analysed: the probe sees the engine when it is loaded
    found = json_report(first)["findings"]
    assert sorted(f["code"] for f in found) == ["SF101", "SF410"]

    again, modules = _run(tmp_path, *scan, cwd=project)
    assert json_report(again)["findings"] == found
    assert _engine_modules(modules) == []

    # the helper changes what the dependent's finding says: that file is analysed again, with the engine
    write(project, "lib/nets.py", NETS_LOGITS)
    after, modules = _run(tmp_path, *scan, cwd=project)
    assert [f["code"] for f in json_report(after)["findings"]] == ["SF101"]
    assert "libcst" in modules


def test_a_json_scan_loads_no_terminal_rendering(tmp_path):
    # rich draws text reports, warnings and progress bars; a JSON report on a pipe has none (and the scan's
    # process loads it before it can fork its workers)
    write(tmp_path, "step.py", SF101_SOURCE)
    result, modules = _run(tmp_path, "scan", "step.py", "--output-format", "json")
    assert result.returncode == 1 and json_report(result)["findings"]
    assert "libcst" in modules and not any(name == "rich" or name.startswith("rich.") for name in modules)
    (tmp_path / "empty").mkdir()
    warned, modules = _run(tmp_path, "scan", "step.py", "empty", "--output-format", "json")
    assert "warning: no Python files found in empty" in warned.stderr and "rich.console" in modules


def test_a_rescan_with_text_output_loads_no_engine(tmp_path):
    write(tmp_path, "step.py", SF101_SOURCE)
    first, _ = _run(tmp_path, "scan", "step.py")
    again, modules = _run(tmp_path, "scan", "step.py")
    assert again.returncode == first.returncode == 1
    assert again.stdout == first.stdout and "SF101" in again.stdout
    assert _engine_modules(modules) == []


def test_the_catalog_without_examples_is_the_catalog_less_its_examples():
    """`rules`, `explain` and scans read the rule files without their examples; nothing else may differ."""
    full, light = load_catalog(), load_catalog(examples=False)
    assert list(light) == list(full)
    for code, spec in full.items():
        assert spec.bad, code
        assert light[code] == replace(spec, bad=(), good=(), near_misses=()), code
