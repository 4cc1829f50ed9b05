"""A rule that raises on a file is reported by its code and dropped for that file; every other rule's
findings (and fixes) still come out. A model part that raises takes exactly the rules that read it."""

from __future__ import annotations

import libcst as cst
import pytest
from rich.text import Text

from stabfix import scan_runner
from stabfix.catalog import load_catalog
from stabfix.checker import Checker
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.names import Names
from stabfix.reports.text import render_errors, render_text
from stabfix.findings import RunResult
from stabfix.scan_runner import Task, process, run_tasks

RESUME = '''import torch


def resume(model, optimizer, path):
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1


scaler = torch.cuda.amp.GradScaler()
'''


class CrashingChecker(Checker):
    """Stands in for a rule with a bug: it reports the first call it sees, then raises on the second."""

    code = "SF106"
    tokens = ("torch",)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1
        if self.calls == 1:
            self.report(node, "a finding made before the crash")
        else:
            raise KeyError("boom")


def _real(*codes: str) -> list[type[Checker]]:
    return [checker_classes()[code] for code in codes]


def _codes(analysis) -> list[str]:
    return [item.finding.code for item in analysis.findings]


def test_a_crashing_rule_keeps_every_other_rules_findings():
    specs = load_catalog()
    clean = analyse_text(RESUME, "t.py", _real("SF107", "SF302"), specs)
    assert sorted(_codes(clean)) == ["SF107", "SF302"] and not clean.failures

    isolated = analyse_text(RESUME, "t.py", [*_real("SF107"), CrashingChecker, *_real("SF302")], specs)

    # what the others find is exactly what they find without the crashing rule
    assert [item.finding for item in isolated.findings] == [item.finding for item in clean.findings]
    assert isolated.error == "SF106 internal error (KeyError: 'boom'); please report it"


def test_the_crashing_rules_findings_made_before_the_crash_are_dropped():
    analysis = analyse_text(RESUME, "t.py", [CrashingChecker], load_catalog())
    assert analysis.findings == []
    assert [failure.code for failure in analysis.failures] == ["SF106"]


def test_the_file_error_names_the_rule_and_the_findings_are_reported(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(RESUME, encoding="utf-8")
    monkeypatch.setattr(scan_runner, "_classes_for", lambda codes: [*_real("SF107"), CrashingChecker])

    result = process(Task(str(path), "train.py", ("SF106", "SF107"), "scan", False)).result

    assert [finding.code for finding in result.findings] == ["SF107"]
    assert result.error is not None
    assert result.error.message == "SF106 internal error (KeyError: 'boom'); please report it"
    text = Text.from_markup(render_text(RunResult([result]), 1)).plain
    errors = Text.from_markup(render_errors(RunResult([result]))).plain  # printed on stderr
    assert "SF107" in text and "train.py: error: SF106 internal error (KeyError: 'boom')" in errors
    # the other rules did analyse the file: the summary must not say it could not be
    assert "1 path was analysed only in part (a rule failed on it)." in text
    assert "could not be analysed" not in text


def test_apply_still_applies_the_other_rules_fixes(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(RESUME, encoding="utf-8")
    monkeypatch.setattr(scan_runner, "_classes_for", lambda codes: [*_real("SF107"), CrashingChecker])

    (result,) = run_tasks([Task(str(path), "train.py", ("SF106", "SF107"), "apply", True)], 1, None).results

    assert result.fixes_applied == 1
    assert 'torch.load(path, map_location="cpu")' in path.read_text(encoding="utf-8")
    assert result.error is not None and result.error.message.startswith("SF106 internal error")


def test_a_suppression_of_the_crashing_rule_is_not_called_unused(tmp_path, monkeypatch):
    # SF106 never got to match its findings to this comment: SF001 must neither report nor remove it
    text = RESUME.replace("ckpt = torch.load(path)", "ckpt = torch.load(path)  # noqa: SF106")
    path = tmp_path / "train.py"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(scan_runner, "_classes_for", lambda codes: [*_real("SF001"), CrashingChecker])

    scanned = process(Task(str(path), "train.py", ("SF001", "SF106"), "scan", False)).result
    (applied,) = run_tasks([Task(str(path), "train.py", ("SF001", "SF106"), "apply", False)], 1, None).results

    assert scanned.findings == [] and scanned.error is not None
    assert applied.fixes_applied == 0 and path.read_text(encoding="utf-8") == text


def test_a_failing_model_part_takes_only_the_rules_that_read_it(monkeypatch):
    def broken(self, node):
        raise ValueError("flows broke")

    monkeypatch.setattr(ValueFlows, "visit_Module", broken)
    analysis = analyse_text(RESUME, "t.py", _real("SF107", "SF302"), load_catalog())

    # SF107 reads the `flows` part, SF302 does not
    assert _codes(analysis) == ["SF302"]
    assert analysis.error == "SF107 internal error in the model part `flows` (ValueError: flows broke); please report it"


def test_a_part_many_parts_read_takes_all_their_rules(monkeypatch):
    def broken(self, node):
        raise ValueError("names broke")

    monkeypatch.setattr(Names, "visit_FunctionDef", broken)
    analysis = analyse_text(RESUME, "t.py", _real("SF107", "SF302"), load_catalog())

    assert analysis.findings == []
    assert analysis.error == (
        "SF107, SF302 internal error in the model part `names` (ValueError: names broke); please report it"
    )


@pytest.mark.parametrize("error", [RecursionError("deep"), MemoryError()])
def test_a_file_too_deep_or_too_big_still_fails_as_a_whole(error, monkeypatch):
    def broken(self, node):
        raise error

    monkeypatch.setattr(CrashingChecker, "visit_Call", broken)
    with pytest.raises(type(error)):
        analyse_text(RESUME, "t.py", [*_real("SF107"), CrashingChecker], load_catalog())
