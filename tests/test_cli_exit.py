"""`stabfix scan` and `apply` end their process as soon as the report is out, without the interpreter's teardown
(stabfix.cli.main): the report, the files written and the exit code must be whole all the same, with one worker
or several, on a pipe or in a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CLEAN_SOURCE, SF101_FIXED, SF101_SOURCE, write
from stabfix.scan_runner import SERIAL_THRESHOLD

REPO = Path(__file__).resolve().parent.parent
FILES = SERIAL_THRESHOLD + 4  # more than one worker's share: with --jobs 2 the files go to a pool


def _stabfix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "stabfix", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600
    )


def _project(root: Path) -> Path:
    for index in range(FILES):
        write(root, f"pkg/step_{index:02d}.py", SF101_SOURCE if index % 2 == 0 else CLEAN_SOURCE)
    return root


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_json_report_on_a_pipe_is_whole_and_the_exit_code_kept(tmp_path, jobs):
    project = _project(tmp_path)
    result = _stabfix(project, "scan", ".", "--no-cache", "--jobs", jobs, "--output-format", "json")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert sorted(finding["path"] for finding in findings) == [f"pkg/step_{i:02d}.py" for i in range(0, FILES, 2)]
    again = _stabfix(project, "scan", ".", "--no-cache", "--jobs", jobs, "--output-format", "json", "--exit-zero")
    assert again.returncode == 0 and again.stdout == result.stdout


def test_a_text_report_and_a_report_file_are_whole(tmp_path):
    project = _project(tmp_path)
    text = _stabfix(project, "scan", ".", "--jobs", "2")
    assert text.returncode == 1, text.stderr
    found = len(range(0, FILES, 2))
    assert text.stdout.endswith(f"Found {found} findings in {found} files ({FILES} scanned). {found} fixable with `stabfix apply`.\n")
    report = tmp_path / "out" / "report.json"
    written = _stabfix(project, "scan", ".", "--jobs", "2", "--output-format", "json", "-o", str(report))
    assert written.returncode == 1, written.stderr
    assert len(json.loads(report.read_text(encoding="utf-8"))["findings"]) == found


def test_apply_writes_every_file_before_the_process_ends(tmp_path):
    project = _project(tmp_path)
    result = _stabfix(project, "apply", ".", "--jobs", "2", "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    for index in range(0, FILES, 2):
        assert (project / f"pkg/step_{index:02d}.py").read_text(encoding="utf-8") == SF101_FIXED
