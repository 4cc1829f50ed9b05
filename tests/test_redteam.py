"""Red-team regression suite: realistic miniatures in tests/redteam/<CODE>/ (bad_*: the rule reports on a
line marked `# expect: CODE` and nowhere else; ok_*: the rule stays silent; a case may be a folder of files
analysed together as one project). Known misses and false
alarms of the current checkers are xfail(strict) through tests/redteam/known_failures.yaml, so fixing
one fails the suite until the manifest is updated."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "redteam"))

from harness import CODES, cases, judge, known_failures  # noqa: E402

KNOWN = known_failures()
CASES = cases()


def _params():
    for case in CASES:
        marks = []
        if case.key in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[case.key]))
        yield pytest.param(case, id=case.key, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_redteam_case(case):
    verdict = judge(case)
    assert verdict.passed, f"{case.key}: {verdict.detail}"


def test_manifest_names_existing_cases():
    keys = {case.key for case in CASES}
    assert set(KNOWN) <= keys, sorted(set(KNOWN) - keys)


@pytest.mark.parametrize("code", CODES)
def test_every_rule_has_bad_and_ok_cases(code):
    kinds = [case.kind for case in CASES if case.code == code]
    assert kinds.count("bad") >= 10 and kinds.count("ok") >= 10


@pytest.mark.parametrize("case", CASES, ids=[case.key for case in CASES])
def test_case_has_a_docstring_and_parses(case):
    for path in case.files:  # a folder case: each of its files that holds code
        source = path.read_text(encoding="utf-8")
        compile(source, str(path), "exec")
        if source.strip() or not case.path.is_dir():
            assert source.lstrip().startswith('"""'), f"{path.name} opens with a one-line docstring"
