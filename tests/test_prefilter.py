"""The token pre-filter: a rule runs (and the file is parsed for it) only when the file's text
contains one of its tokens and one token of each further group it names."""

from __future__ import annotations

from stabfix.checkers import checker_classes

CLASSES = list(checker_classes().values())


def selected(text: str) -> set[str]:
    return {cls.code for cls in CLASSES if cls.may_fire(text)}  # the text gates (structural ones: test_shape_gates)


def test_a_rule_needs_one_token_of_each_group():
    assert "SF101" not in selected("x = y.detach().requires_grad_(True)\n")  # no loss anywhere
    assert "SF101" in selected("x = y.detach().requires_grad_(True)\nF.mse_loss(p, x)\n")
    assert "SF402" not in selected("g = p.grad\n")  # no optimizer step to undo
    assert "SF402" in selected("opt.step()\np.data.add_(p.grad)\n")


def test_a_file_with_no_rule_token_is_not_parsed_by_libcst(monkeypatch):
    import libcst

    from stabfix.catalog import load_catalog
    from stabfix.engine import analyse_text

    def fail(*args, **kwargs):
        raise AssertionError("parsed a file no rule can fire on")

    monkeypatch.setattr(libcst, "parse_module", fail)
    analysis = analyse_text("x = y.requires_grad\n", "a.py", CLASSES, load_catalog())
    assert analysis.findings == [] and analysis.module is None


def test_unused_suppression_runs_only_where_a_directive_may_name_a_stabfix_rule():
    assert "SF001" not in selected("import os  # noqa: F401\nx = 1  # noqa\n")
    assert "SF001" in selected("x = 1  # noqa: E501, SF101\n")
    assert "SF001" in selected("x = 1  # stabfix: ignore[loss-target-requires-grad]\n")
    assert "SF001" in selected("x = 1  # NOQA:sf201\n")
