"""Which steps a statement runs on: the gates between it and its step, in a canonical form.

A `StepPath` (from the `steps` part) lists the gates between a site and its training loop or step
function. These queries compare two such paths:

- `conditions(steps, path)`: the gates' conditions split at `and`, device checks left out, layout
  erased, and thresholds on a memory reading erased (`memory_allocated() > 8e9` and
  `memory_reserved() / 2**30 > 12` pick the same high-memory steps); an interval (`step % 100 == 0`)
  or a threshold on a user setting (`args.level >= 2`) stays as written, each its own gate. Two sites
  with equal condition sets run on the same steps.
- `never_both(first, second)`: the two sit in different branches of one `if`/`match`.
- `skipped_by_interval_guard(...)`: an earlier `if <interval test>: continue` skips the statement on
  most steps.
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.model.places import Place, body_of, index_in
from stabfix.model.structure import MEMORY_IN_USE_CALLS, BranchFrame, FunctionFrame, StepIndex, StepPath

_ORDERINGS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def conditions(steps: StepIndex, path: StepPath) -> frozenset[str]:
    """What must hold in the step for the site to run, one canonical key per `and`-part."""
    function = next((f for f in reversed(path.frames) if isinstance(f, FunctionFrame)), None)
    keys: set[str] = set()
    for gate in path.gates:
        test = getattr(gate.node, "test", None)
        if gate.kind == "if" and test is not None:
            keys.update(condition_key(steps, part, function) for part in _conjuncts(steps, test))
        elif gate.kind == "else" and test is not None:
            keys.add("not " + condition_key(steps, test, function))
        else:
            keys.add(f"{gate.kind} #{id(gate.node)}")  # a `case`, handler or loop `else`: only itself
    return frozenset(keys)


def condition_key(steps: StepIndex, test: cst.BaseExpression, function: FunctionFrame | None) -> str:
    """The condition with layout erased, memory thresholds too (constants compared by `<`/`>` with a
    memory reading), and every how-much-memory-is-in-use reading spelled alike."""

    class _Thresholds(cst.CSTTransformer):
        def __init__(self) -> None:
            super().__init__()
            self.orderings = 0

        def _on_memory(self, node: cst.Comparison) -> bool:
            operands = [node.left, *(target.comparator for target in node.comparisons)]
            ordering = all(isinstance(target.operator, _ORDERINGS) for target in node.comparisons)
            return ordering and any(steps.reads_memory(operand, function) for operand in operands)

        def visit_Comparison(self, node: cst.Comparison) -> None:
            self.orderings += self._on_memory(node)

        def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
            self.orderings -= self._on_memory(original)
            return updated

        def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.BaseExpression:
            return cst.Name("THRESHOLD") if self.orderings else updated

        def leave_Float(self, original: cst.Float, updated: cst.Float) -> cst.BaseExpression:
            return cst.Name("THRESHOLD") if self.orderings else updated

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            if steps.imports.qualify(original.func) in MEMORY_IN_USE_CALLS:
                return cst.Name("DEVICE_MEMORY_IN_USE")
            return updated

    code = cst.Module(body=[]).code_for_node(test.visit(_Thresholds()))
    try:
        return ast.dump(ast.parse(code.strip(), mode="eval"), annotate_fields=False, include_attributes=False)
    except SyntaxError:
        return " ".join(code.split())


def _conjuncts(steps: StepIndex, test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(steps, test.left) + _conjuncts(steps, test.right)
    return [] if steps.is_device_check(test) else [test]


def never_both(first: StepPath, second: StepPath) -> bool:
    """The two sites sit in different branches of one `if`/`match`: one step never runs both."""
    branches = {id(frame.node): frame.kind for frame in first.frames if isinstance(frame, BranchFrame)}
    for frame in second.frames:
        if isinstance(frame, BranchFrame) and id(frame.node) in branches and branches[id(frame.node)] != frame.kind:
            return True
    cases = {id(frame.node) for frame in first.frames if isinstance(frame, BranchFrame) and frame.kind == "case"}
    other_cases = {id(frame.node) for frame in second.frames if isinstance(frame, BranchFrame) and frame.kind == "case"}
    return bool(cases) and bool(other_cases) and cases.isdisjoint(other_cases)


def skipped_by_interval_guard(steps: StepIndex, place: Place, statement: cst.CSTNode, scope_node: cst.CSTNode) -> bool:
    """An earlier `if <interval test>: continue/return/break` in the same step skips `statement` on most
    steps (`if step % 100: continue` before it), at any level between the statement and the scope."""
    index = index_in(place, statement)
    stop = index_in(place, scope_node)
    if index is None or stop is None:
        return False
    while index > stop:
        current, parent = place[index], place[index - 1]
        for sibling in body_of(parent):
            if sibling is current:
                break
            if isinstance(sibling, cst.If) and sibling.orelse is None and _ends_in_jump(sibling.body):
                if steps.is_interval_test(sibling.test):
                    return True
        index -= 1
    return False


def _ends_in_jump(body: cst.BaseSuite) -> bool:
    if isinstance(body, cst.SimpleStatementSuite):
        small = list(body.body)
    else:
        last = body.body[-1] if body.body else None
        small = list(last.body) if isinstance(last, cst.SimpleStatementLine) else []
    return bool(small) and isinstance(small[-1], (cst.Continue, cst.Return, cst.Break, cst.Raise))
