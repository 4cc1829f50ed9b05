"""The statement codemods of `stabfix.fixes.statements` (SF303, SF404-SF406 fixes)."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.fixes.statements import insert_after, insert_before, move_before


class _Apply(cst.CSTTransformer):
    def __init__(self, changes):
        super().__init__()
        self.changes = changes

    def on_leave(self, original_node, updated_node):
        return self.changes.get(original_node, updated_node)


def _lines(module: cst.Module) -> list[cst.SimpleStatementLine]:
    body = module.body[0].body.body  # the first statement is a `for` loop
    return [line for line in body if isinstance(line, cst.SimpleStatementLine)]


SOURCE = textwrap.dedent(
    """
    for x in loader:
        loss.backward()
        # apply the update
        opt.step()
        clip(params)
    """
)


def test_insert_before_keeps_the_comment_above_the_new_line():
    module = cst.parse_module(SOURCE)
    step = _lines(module)[1]
    out = module.visit(_Apply(insert_before(step, "scaler.unscale_(opt)"))).code
    assert "    # apply the update\n    scaler.unscale_(opt)\n    opt.step()\n" in out


def test_insert_after_adds_a_line_in_the_same_block():
    module = cst.parse_module(SOURCE)
    step = _lines(module)[1]
    out = module.visit(_Apply(insert_after(step, "opt.zero_grad(set_to_none=True)"))).code
    assert "    opt.step()\n    opt.zero_grad(set_to_none=True)\n    clip(params)\n" in out
    compile(out, "x.py", "exec")


def test_move_before_puts_the_line_and_extra_lines_ahead_of_the_anchor():
    module = cst.parse_module(SOURCE)
    _, step, clip = _lines(module)
    out = module.visit(_Apply(move_before(clip, step, "scaler.unscale_(opt)"))).code
    assert out.endswith("    # apply the update\n    scaler.unscale_(opt)\n    clip(params)\n    opt.step()\n")
    assert move_before(step, step) is None
