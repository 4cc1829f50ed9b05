"""Codemods for code that runs on more steps than it should: gate it behind an interval, or drop a copy.

- `interval_gate_fix`: put a per-step statement, with the neighbouring lines that belong to it, behind
  `if <counter> % N == 0:`; when the run is the whole body of a device check
  (`if torch.cuda.is_available(): torch.cuda.empty_cache()`), the gate joins that check with `and`.
  Unsafe: it changes when the statement runs.
- `removal_fix`: remove a block of statements (a `pass` keeps an emptied body valid).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from stabfix.findings import Fix
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.source.places import Place, body_of, called_as_statement, parent_in, position_in


def interval_gate_fix(
    place: Place,
    call: cst.Call,
    counter: str,
    interval: int,
    *,
    belongs: Callable[[cst.CSTNode], bool],
    is_device_check: Callable[[cst.BaseExpression], bool],
    what: str,
) -> Optional[Fix]:
    """Gate the statement that is `call` (a statement of its own at the end of `place`).

    `belongs(line)` tells which lines (and one-line suites) run with it and move behind the gate too: a
    run of consecutive such lines around the call's line. `what` names the work in the description.
    """
    container = called_as_statement(place, call)
    if container is None:
        return None
    gate = parsed_expression(f"{counter} % {interval} == 0")
    description = f"run {what} only every {interval} steps (`if {counter} % {interval} == 0:`)"
    if type(container) is cst.SimpleStatementSuite:
        owner = parent_in(place, container)
        if type(owner) is cst.If and owner.orelse is None and is_device_check(owner.test) and belongs(container):
            return Fix("unsafe", description, {owner: owner.with_changes(test=_and(owner.test, gate))})
        return None
    if not belongs(container):
        return None
    block = parent_in(place, container)
    if type(block) not in (cst.IndentedBlock, cst.Module):
        return None
    siblings = body_of(block)
    start = end = position_in(siblings, container) or 0
    end += 1
    while start > 0 and type(siblings[start - 1]) is cst.SimpleStatementLine and belongs(siblings[start - 1]):
        start -= 1
    while end < len(siblings) and type(siblings[end]) is cst.SimpleStatementLine and belongs(siblings[end]):
        end += 1
    run = siblings[start:end]
    owner = parent_in(place, block)
    if (
        type(owner) is cst.If
        and owner.body is block
        and owner.orelse is None
        and len(run) == len(siblings)
        and is_device_check(owner.test)
    ):
        return Fix("unsafe", description, {owner: owner.with_changes(test=_and(owner.test, gate))})
    first = run[0]
    wrapped = cst.If(
        test=gate,
        body=cst.IndentedBlock(body=[first.with_changes(leading_lines=()), *run[1:]]),
        leading_lines=first.leading_lines,
    )
    changes: dict[cst.CSTNode, object] = {first: wrapped}
    changes.update({line: cst.RemoveFromParent() for line in run[1:]})
    return Fix("unsafe", description, changes)


def removal_fix(statements: Sequence[cst.CSTNode], block: cst.CSTNode, description: str) -> Fix:
    """Remove the statements (consecutive, in `block`); a `pass` stands in for an emptied block."""
    if type(block) is cst.IndentedBlock and len(statements) == len(block.body):
        first = statements[0]
        placeholder = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=first.leading_lines)
        changes: dict[cst.CSTNode, object] = {first: placeholder}
        changes.update({statement: cst.RemoveFromParent() for statement in statements[1:]})
        return Fix("safe", description, changes)
    return Fix("safe", description, {statement: cst.RemoveFromParent() for statement in statements})


def _and(test: cst.BaseExpression, gate: cst.BaseExpression) -> cst.BaseExpression:
    needs_parens = type(test) in (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr) and not test.lpar
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        needs_parens = False
    if needs_parens:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=test, operator=cst.And(), right=gate)
