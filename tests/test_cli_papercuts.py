"""The edges a new user meets first (issue 24, papercuts): what `apply --diff` says and exits with,
counts that agree between `scan`, `--statistics` and `apply`, wording, help text, errors on stderr,
output paths checked before the run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers import CLEAN_SOURCE, SF101_SOURCE, json_report, write
from stabfix.catalog import load_catalog

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def _bad_example(code: str, safety: str | None = None) -> str:
    """A single-file bad example of the rule whose findings get `safety` (the rule's own when None)."""
    spec = load_catalog()[code]
    for example in spec.bad:
        if not example.files and (example.fix_safety or spec.fix_safety) == (safety or spec.fix_safety):
            return example.code
    raise AssertionError(f"{code} has no single-file bad example with {safety} fixes")


# -- apply --diff ------------------------------------------------------------------------------------


def test_diff_with_only_unsafe_fixes_says_why_nothing_and_exits_zero(tmp_path, run_cli):
    write(tmp_path, "loader.py", _bad_example("SF412"))
    write(tmp_path, "model.py", _bad_example("SF413"))
    result = run_cli("apply", "--diff", "--no-cache", "--select", "SF412,SF413", str(tmp_path))
    assert result.stdout == "", "stdout carries only diffs, and nothing would change"
    assert result.returncode == 0, result.stderr
    assert "No safe fixes; 2 findings have unsafe fixes (SF412, SF413): rerun with --unsafe-fixes" in result.stderr


def test_diff_with_changes_exits_one_and_says_how_many(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    write(tmp_path, "loader.py", _bad_example("SF412"))
    result = run_cli("apply", "--diff", "--no-cache", "--select", "SF101,SF412", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("--- a/") and "-    target.requires_grad_(True)" in result.stdout
    assert "Would fix 1 finding in 1 file. 1 more finding (SF412) with `--unsafe-fixes`." in result.stderr


def test_diff_with_only_unfixable_findings_exits_zero(tmp_path, run_cli):
    write(tmp_path, "train.py", _bad_example("SF408"))
    result = run_cli("apply", "--diff", "--select", "SF408", str(tmp_path))
    assert (result.returncode, result.stdout) == (0, "")
    assert "Nothing to change; 1 finding has no automatic fix (SF408)." in result.stderr


def test_diff_exit_code_is_the_one_readme_and_help_state(run_cli):
    help_text = " ".join(run_cli("apply", "--help", env={"COLUMNS": "400"}).stdout.split())
    assert "write nothing; exit 1 if something would change (or a file could not be analysed), else 0" in help_text
    exit_table = README[README.index("### Exit codes"):README.index("### Output formats")]
    assert "`apply --diff`: nothing would change" in exit_table.split("\n| 1 |")[0]
    usage = " ".join(README[README.index("## Usage"):README.index("### What `apply`")].split())
    assert "`--diff` prints unified diffs and writes nothing (exit 1 when something would change, 0 otherwise" in usage


# -- counts that agree ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [
    "SF302/bad_two_scalers_from_torch_cuda_import_amp.py",  # one import rewrite repairs both findings
    "SF101/bad_tensor_to_device_float.py",  # the fix takes two rounds for one finding
    "SF103/bad_eval_outputs_collected.py",  # the SF106 fix also ends SF103's leak
])
def test_scan_fixable_count_is_what_apply_fixes(tmp_path, run_cli, case):
    target = tmp_path / "train.py"
    shutil.copyfile(REPO / "tests" / "redteam" / case, target)
    scanned = json_report(run_cli("scan", "--no-cache", "--output-format", "json", str(target)))["summary"]
    applied = json_report(run_cli("apply", "--output-format", "json", str(target)))["summary"]
    assert applied["fixes_applied"] == scanned["fixable_safe"] > 0
    assert applied["fixable_safe"] == 0, "nothing `stabfix apply` would fix is left"
    text = run_cli("scan", "--no-cache", str(target)).stdout
    assert f"{scanned['fixable_safe']} fixable with `stabfix apply`." not in text  # already applied


def test_statistics_rows_add_up_to_the_summary(tmp_path, run_cli):
    """SF106's fix is safe for one evaluation and unsafe for another: its row says so, and the
    rows' fixable counts are the summary's."""
    write(tmp_path, "a.py", _bad_example("SF106", "safe"))
    write(tmp_path, "b.py", _bad_example("SF106", "unsafe"))
    write(tmp_path, "c.py", SF101_SOURCE)
    result = run_cli("scan", "--no-cache", "--statistics", "--select", "SF101,SF106", str(tmp_path))
    rows = result.stdout.splitlines()
    assert "2  SF106  [*] eval-without-no-grad (1 safe, 1 unsafe)" in rows
    assert "1  SF101  [*] loss-target-requires-grad" in rows
    assert rows[-1].startswith("Found 3 findings in 3 files (3 scanned). 2 fixable with `stabfix apply`. 1 more with")


# -- wording -------------------------------------------------------------------------------------------


def test_summaries_count_files_with_findings_and_agree_in_number(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    write(tmp_path, "ok.py", CLEAN_SOURCE)
    write(tmp_path, "loader.py", _bad_example("SF412"))
    scan = run_cli("scan", "--no-cache", "--select", "SF101,SF412", str(tmp_path))
    assert "Found 2 findings in 2 files (3 scanned)." in scan.stdout
    apply = run_cli("apply", "--select", "SF101,SF412", str(tmp_path))
    assert "Applied 1 fix. 1 finding remains. 1 more with `--unsafe-fixes`." in apply.stdout


# -- help ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["scan", "apply", "verify", "rules", "explain"])
def test_help_shows_flags_without_placeholders_and_markup_as_written(run_cli, command):
    result = run_cli(command, "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "<bool>" not in result.stdout
    if command == "verify":
        assert "stabfix[plot]" in result.stdout


# -- errors go to stderr, output paths are checked first ----------------------------------------------


@pytest.mark.parametrize("args", [
    ("scan", "no/such/path"),
    ("scan", "--select", "SF999", "."),
    ("scan", "--output-format", "xml", "."),
    ("apply", "--config", "no/such/stabfix.yaml", "."),
    ("explain", "SF999"),
    ("verify", "no/such/project"),
    ("verify", ".", "--budget", "nonsense"),
])
def test_errors_go_to_stderr_in_one_line(tmp_path, run_cli, args):
    write(tmp_path, "ok.py", CLEAN_SOURCE)
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "error" not in result.stdout.lower(), "stdout carries the report (here at most its summary line)"
    assert "Traceback" not in result.stderr and "error" in result.stderr.lower()


def _unwritable(tmp_path: Path) -> list[Path]:
    blocker = write(tmp_path, "a_file", "")
    return [blocker / "report.json", tmp_path]  # under a file; a folder


@pytest.mark.parametrize("command", ["scan", "apply"])
def test_unwritable_output_fails_before_the_run(tmp_path, run_cli, command):
    project = tmp_path / "project"
    target = write(project, "train.py", SF101_SOURCE)
    for output in _unwritable(tmp_path):
        result = run_cli(command, str(project), "-o", str(output))
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and f"cannot write {output}" in result.stderr
        assert target.read_text() == SF101_SOURCE, "nothing ran, nothing was rewritten"
        assert not (project / ".stabfix_cache").exists(), "nothing ran, nothing was cached"


def test_verify_unwritable_json_fails_before_the_run(tmp_path, run_cli):
    project = tmp_path / "healthy"
    shutil.copytree(REPO / "tests" / "verify_cases" / "healthy", project)
    for output in _unwritable(tmp_path):
        result = run_cli("verify", str(project), "--steps", "3", "--warmup", "1", "--json", str(output))
        assert result.returncode == 2, result.stdout + result.stderr
        assert "cannot write" in result.stderr and "step" not in result.stdout


# -- the rules table -----------------------------------------------------------------------------------


def test_rules_table_says_safe_some_unsafe_exactly_where_a_finding_can_get_an_unsafe_fix(run_cli):
    """The label comes from the examples' declared `fix_safety`; the rule itself, run on its bad
    examples, must agree: a safe rule labelled plain `safe` gives no finding an unsafe fix."""
    from stabfix.checkers import checker_classes
    from stabfix.engine import analyse_text

    catalog, classes = load_catalog(), checker_classes()
    for code, spec in catalog.items():
        if spec.fix_safety != "safe" or code not in classes:
            continue
        safeties = {
            item.finding.fix_safety
            for example in spec.bad if not example.files
            for item in analyse_text(example.code, "example.py", [classes[code]], catalog).findings
        }
        assert (spec.fix_label == "safe (some unsafe)") == ("unsafe" in safeties), code
    rows = run_cli("rules").stdout
    assert re.search(r"SF106 .* safe \(some unsafe\)", rows) and re.search(r"SF101 .* safe ", rows)
    assert "| memory | safe (some unsafe) | on |" in README.split("[SF106]")[1].splitlines()[0]


# -- install honesty: the main job needs no torch -------------------------------------------------------


def _without_torch(tmp_path: Path, *args: str):
    """The CLI in a process where `import torch` fails, as after `pip install .` on a machine without it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # every import of torch now fails\n"
        "import stabfix.cli\n"
        f"sys.argv = ['stabfix', *{list(args)!r}]\n"
        "stabfix.cli.main()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)


@pytest.mark.parametrize("args,exit_code,expected", [
    (("scan", "--no-cache", "."), 1, "SF101"),
    (("apply", "--diff", "."), 1, "-    target.requires_grad_(True)"),
    (("rules",), 0, "loss-target-requires-grad"),
    (("explain", "SF101"), 0, "What it does"),
])
def test_scan_apply_rules_explain_work_without_torch(tmp_path, args, exit_code, expected):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = _without_torch(tmp_path, *args)
    assert result.returncode == exit_code, result.stderr
    assert expected in result.stdout


def test_verify_without_torch_is_one_line_naming_the_install(tmp_path):
    project = tmp_path / "healthy"
    shutil.copytree(REPO / "tests" / "verify_cases" / "healthy", project)
    result = _without_torch(tmp_path, "verify", str(project), "--steps", "3", "--warmup", "1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "verify needs PyTorch" in line and "pip install 'stabfix[verify]'" in line
    assert "--index-url https://download.pytorch.org/whl/cpu" in line


def test_readme_says_what_pip_gets_for_verify():
    install = README[README.index("## Install"):README.index("## Usage")]
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in install
    assert "Linux x86_64 wheel is the\nCUDA build" in install and "the CPU build" not in install
