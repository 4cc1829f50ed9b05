"""The rule pages in docs/rules/ and the README's rules table are generated from the rule YAMLs
(`python -m stabfix.docs`): they must be fresh, and the README must keep the commands CI runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from stabfix.catalog import load_catalog
from stabfix.docs import RULE_DOCS_BASE_URL, render_table, rule_url, stale_files

REPO = Path(__file__).resolve().parent.parent


def test_rule_pages_and_readme_table_are_fresh():
    stale = [str(path.relative_to(REPO)) for path in stale_files(REPO)]
    assert not stale, f"stale generated docs {stale}: run `python -m stabfix.docs`"


def test_every_rule_has_a_page_linked_from_the_readme_table():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for code, spec in load_catalog().items():
        page = REPO / "docs" / "rules" / f"{code}-{spec.name}.md"
        assert page.is_file()
        text = page.read_text(encoding="utf-8")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
            assert heading in text, (code, heading)
        assert f"(docs/rules/{code}-{spec.name}.md)" in readme
        assert rule_url(code, spec.name) == f"{RULE_DOCS_BASE_URL}/{page.name}"
    assert render_table(load_catalog()) in readme


def test_check_command_reports_stale_docs(tmp_path):
    result = subprocess.run([sys.executable, "-m", "stabfix.docs", "--check"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_test_command_is_what_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -c constraints.txt -e ".[verify,test]" && python -m pytest -n auto'
    assert f"\n{command}\n" in readme and f"\n{command}\n" in ci
    assert "\npip install . && stabfix scan fixtures/\n" in readme  # the quick start: scan needs no torch
