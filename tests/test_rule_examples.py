"""Every example in every rule YAML is a test: bad examples fire, good ones and near misses do not,
and each expected fix is exactly what `apply --unsafe-fixes` produces (and a second apply is a no-op).

Each example is analysed as `stabfix scan` analyses a file: with the project of its scan, here the
example's own `files` (other modules of its project) beside it, held in memory."""

from __future__ import annotations

import pytest

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.fixer import fix_text

from helpers import example_project

CATALOG = load_catalog()
CHECKERS = checker_classes()


def _cases(kind: str):
    for code, spec in CATALOG.items():
        for index, example in enumerate(getattr(spec, kind)):
            yield pytest.param(code, example, id=f"{code}-{kind}-{index}-{example.name[:40]}")


def _classes(code: str, source: str):
    """A rule's examples run through its own checker only; a meta rule (unused-suppression) judges
    the other rules' findings, so its examples also run the rules their comments name (and only
    those, so that rules added later cannot change them)."""
    if not CHECKERS[code].meta:
        return [CHECKERS[code]]
    named = [other for other, spec in CATALOG.items() if other in source or spec.name in source]
    return [CHECKERS[other] for other in sorted({*named, code})]


def _analyse(code: str, example):
    return analyse_text(example.code, example.path, _classes(code, example.code), CATALOG, project=example_project(example))


def _fix(code: str, example, text: str):
    return fix_text(text, example.path, _classes(code, text), CATALOG, unsafe=True, project=example_project(example))


def _findings(code: str, example):
    return [item.finding for item in _analyse(code, example).findings if item.finding.code == code]


def test_every_rule_has_a_checker_and_every_checker_a_rule():
    assert set(CATALOG) == set(CHECKERS)


@pytest.mark.parametrize("code", sorted(CATALOG))
def test_rule_ships_enough_examples(code):
    spec = CATALOG[code]
    assert len(spec.bad) >= 6, "at least 6 bad examples"
    assert len(spec.near_misses) >= 6, "at least 6 near misses that must stay silent"
    if spec.fix_safety != "none":
        assert any(example.fixed for example in spec.bad), "a fixable rule shows its fix"


@pytest.mark.parametrize("code,example", list(_cases("bad")))
def test_bad_example_is_reported(code, example):
    compile(example.code, "example.py", "exec")
    for path, other in example.files:
        compile(other, path, "exec")
    assert _findings(code, example), f"{code} did not fire on: {example.name}"


@pytest.mark.parametrize("code,example", [case for case in _cases("bad") if case.values[1].message_contains])
def test_message_names_the_users_variables(code, example):
    messages = [finding.message for finding in _findings(code, example)]
    for words in example.message_contains:
        assert any(words in message for message in messages), (words, messages)


@pytest.mark.parametrize("code,example", [case for case in _cases("bad") if case.values[1].fix_safety])
def test_fix_safety_is_what_the_example_says(code, example):
    analysis = _analyse(code, example)
    safeties = {item.fix.safety if item.fix else "none" for item in analysis.findings if item.finding.code == code}
    assert safeties == {example.fix_safety}


@pytest.mark.parametrize("code,example", list(_cases("good")) + list(_cases("near_misses")))
def test_good_example_and_near_miss_stay_silent(code, example):
    compile(example.code, "example.py", "exec")
    assert _findings(code, example) == []


@pytest.mark.parametrize("code,example", [case for case in _cases("bad") if case.values[1].fixed])
def test_expected_fix_is_exactly_what_apply_writes(code, example):
    outcome = _fix(code, example, example.code)
    assert outcome.text == example.fixed
    compile(outcome.text, "example.py", "exec")
    again = _fix(code, example, outcome.text)
    assert again.text == outcome.text, "applying twice must change nothing"


@pytest.mark.parametrize("code,example", [case for case in _cases("bad") if not case.values[1].fixed])
def test_bad_example_without_expected_fix_is_left_unchanged(code, example):
    outcome = _fix(code, example, example.code)
    assert outcome.text == example.code
