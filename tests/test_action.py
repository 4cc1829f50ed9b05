"""The composite GitHub Action (`action.yml`), run locally: every `run:` step with its inputs
substituted, in a temporary project, in a fresh virtualenv, as the runner would run it
(`bash --noprofile --norc -eo pipefail`). The upload step is GitHub's own action, checked by shape."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from helpers import CLEAN_SOURCE, SF101_SOURCE, write

REPO = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _expand(text: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        if expression.startswith("steps.scan.outputs."):
            return outputs.get(expression.removeprefix("steps.scan.outputs."), "")
        raise AssertionError(f"unexpected expression in a run step: {expression}")

    return _EXPR.sub(value, str(text))


@pytest.fixture(scope="module")
def runner_env(tmp_path_factory):
    """A fresh virtualenv standing in for the runner's Python; it sees this environment's packages
    (a .pth file) so the install step builds and installs stabfix itself without a registry. Its pip is
    this environment's, seen through the same .pth: `python -m pip` there installs into the virtualenv
    (its sys.prefix), and the venv skips ensurepip's own copy of pip (4 s of CPU)."""
    venv = tmp_path_factory.mktemp("runner") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=600)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(venv),
        "GITHUB_ACTION_PATH": str(REPO),
        # dependencies come from the outer environment; hatchling too (no isolated build env)
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
    }
    workdir = tmp_path_factory.mktemp("install")
    install = _run(STEPS["Install stabfix"], _inputs(), {}, env, workdir)
    assert install.returncode == 0, install.stdout + install.stderr
    assert shutil.which("stabfix", path=str(venv / "bin")), "the install step put stabfix on the runner's PATH"
    return env


def _inputs(**given: str) -> dict[str, str]:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    return inputs


def _run(step: dict, inputs: dict[str, str], outputs: dict[str, str], env: dict, cwd: Path):
    assert step["shell"] == "bash"
    output_file = cwd / f".github_output_{step['name'].replace(' ', '_')}"
    output_file.write_text("")
    step_env = {key: _expand(value, inputs, outputs) for key, value in (step.get("env") or {}).items()}
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _expand(step["run"], inputs, outputs)],
        cwd=cwd, env={**env, **step_env, "GITHUB_OUTPUT": str(output_file)},
        capture_output=True, text=True, timeout=600,
    )
    for line in output_file.read_text().splitlines():
        key, _, value = line.partition("=")
        outputs[key] = value
    return result


def test_the_action_is_composite_and_uploads_with_the_standard_action():
    assert ACTION["runs"]["using"] == "composite"
    upload = STEPS["Upload SARIF to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert set(ACTION["inputs"]) == {"paths", "args", "sarif-file", "upload", "fail-on-findings", "verify", "verify-args"}


def test_scan_and_fail_steps(tmp_path, runner_env):
    project = tmp_path / "project"
    write(project, "train.py", SF101_SOURCE)
    write(project, "ok.py", CLEAN_SOURCE)
    inputs, outputs = _inputs(args="--select SF1"), {}
    scan = _run(STEPS["stabfix scan"], inputs, outputs, runner_env, project)
    assert scan.returncode == 0, scan.stdout + scan.stderr
    assert outputs["exit-code"] == "1"
    assert "train.py:6:5: SF101" in scan.stdout, "the findings are readable in the job log"
    sarif = json.loads((project / "stabfix.sarif").read_text())
    assert [result["ruleId"] for result in sarif["runs"][0]["results"]] == ["SF101"]
    failed = _run(STEPS["Fail on findings"], inputs, outputs, runner_env, project)
    assert failed.returncode == 1 and "exited 1" in failed.stdout

    (project / "train.py").unlink()
    clean_outputs: dict[str, str] = {}
    clean = _run(STEPS["stabfix scan"], _inputs(**{"sarif-file": "out/report.sarif"}), clean_outputs, runner_env, project)
    assert clean.returncode == 0 and clean_outputs["exit-code"] == "0", clean.stdout + clean.stderr
    assert json.loads((project / "out" / "report.sarif").read_text())["runs"][0]["results"] == []


def test_scan_step_stops_when_stabfix_cannot_run(tmp_path, runner_env):
    project = tmp_path / "project"
    write(project, "ok.py", CLEAN_SOURCE)
    outputs: dict[str, str] = {}
    scan = _run(STEPS["stabfix scan"], _inputs(args="--select SF999"), outputs, runner_env, project)
    assert scan.returncode == 2 and outputs["exit-code"] == "2"
    assert "unknown rule selector" in scan.stderr


def test_verify_step(tmp_path, runner_env):
    project = tmp_path / "healthy"
    shutil.copytree(REPO / "tests" / "verify_cases" / "healthy", project)
    inputs = _inputs(verify=".", **{"verify-args": "--steps 3 --warmup 1 --device cpu"})
    result = _run(STEPS["stabfix verify"], inputs, {}, runner_env, project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verify passed" in result.stdout


def test_the_upload_cannot_fail_forks_or_repositories_without_code_scanning():
    upload = STEPS["Upload SARIF to code scanning"]
    assert upload["continue-on-error"] is True
    assert "github.event.pull_request.head.repo.fork != true" in upload["if"]
    note = STEPS["Note a failed upload"]
    assert f"steps.{upload['id']}.outcome == 'failure'" in note["if"] and "::warning" in note["run"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = readme[readme.index("### GitHub Actions"):readme.index("## verify")]
    assert "security-events: write" in ci and "contents: read" in ci
    assert "forks" in ci.split("Permissions:")[1]
