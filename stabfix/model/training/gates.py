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
import re

import libcst as cst

from stabfix.model.source.places import Place, body_of, index_in
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.source.syntax import node_code
from stabfix.model.training.step_frames import BranchFrame, FunctionFrame, StepPath
from stabfix.model.training.step_paths import MEMORY_IN_USE_CALLS
from stabfix.model.training.structure import StepIndex

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
    code = node_code(test.visit(_Thresholds(steps, function)))
    try:
        return ast.dump(ast.parse(code.strip(), mode="eval"), annotate_fields=False, include_attributes=False)
    except SyntaxError:
        return " ".join(code.split())


class _Thresholds(cst.CSTTransformer):
    """`condition_key`'s rewrite: memory thresholds and memory readings spelled alike. One class for the
    module: a class made per call cost more than the rewrite (each new transformer class is checked
    against every libcst visitor class by `CSTNode.visit`'s isinstance)."""

    def __init__(self, steps: StepIndex, function: FunctionFrame | None) -> None:
        super().__init__()
        self.steps = steps
        self.function = function
        self.orderings = 0

    def _on_memory(self, node: cst.Comparison) -> bool:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        ordering = all(isinstance(target.operator, _ORDERINGS) for target in node.comparisons)
        return ordering and any(self.steps.reads_memory(operand, self.function) for operand in operands)

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
        if self.steps.imports.qualify(original.func) in MEMORY_IN_USE_CALLS:
            return cst.Name("DEVICE_MEMORY_IN_USE")
        return updated


def _conjuncts(steps: StepIndex, test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
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


def earlier_jump_guards(place: Place, statement: cst.CSTNode, scope_node: cst.CSTNode, errors: bool = True):
    """The tests of the `if <test>: continue/return/break` statements (and `raise`, with `errors`) that
    come before `statement` at any level between it and the scope: each may skip it."""
    index = index_in(place, statement)
    stop = index_in(place, scope_node)
    if index is None or stop is None:
        return
    while index > stop:
        current, parent = place[index], place[index - 1]
        for sibling in body_of(parent):
            if sibling is current:
                break
            if type(sibling) is cst.If and sibling.orelse is None and _ends_in_jump(sibling.body, errors):
                yield sibling.test
        index -= 1


def skipped_by_interval_guard(steps: StepIndex, place: Place, statement: cst.CSTNode, scope_node: cst.CSTNode) -> bool:
    """An earlier `if <interval test>: continue/return/break` in the same step skips `statement` on most
    steps (`if step % 100: continue` before it), at any level between the statement and the scope."""
    return any(steps.is_interval_test(test) for test in earlier_jump_guards(place, statement, scope_node))


def _ends_in_jump(body: cst.BaseSuite, errors: bool = True) -> bool:
    if type(body) is cst.SimpleStatementSuite:
        small = list(body.body)
    else:
        last = body.body[-1] if body.body else None
        small = list(last.body) if type(last) is cst.SimpleStatementLine else []
    jumps = (cst.Continue, cst.Return, cst.Break, cst.Raise) if errors else (cst.Continue, cst.Return, cst.Break)
    return bool(small) and isinstance(small[-1], jumps)


# --- flags fixed by module constants, and early exits (SF202/SF204) --------------------------------


def constant_truth(names, test: cst.BaseExpression, depth: int = 0) -> bool | None:
    """The value of a test that module-level constants fix: `DEBUG_MEMORY` bound only to `True` at module
    level (a flag left on) is always true, `not DEBUG_MEMORY` always false; None when the code may vary it."""
    if depth > 6:
        return None
    if type(test) is cst.Name:
        if test.value in ("True", "False"):
            return test.value == "True"
        bindings = names.bindings_of(test) if names is not None else []
        if not bindings or any(b.kind != "assign" or b.scope.parent is not None for b in bindings):
            return None  # a parameter, a loop variable, or a local: it varies
        results = {constant_truth(names, b.bound_value, depth + 1) if b.bound_value is not None else None for b in bindings}
        return results.pop() if len(results) == 1 else None
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = constant_truth(names, test.expression, depth + 1)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        left = constant_truth(names, test.left, depth + 1)
        right = constant_truth(names, test.right, depth + 1)
        if type(test.operator) is cst.And:
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    return None


def live_gates(steps: StepIndex, names, path: StepPath) -> tuple[BranchFrame, ...]:
    """The path's gates without the branches a module constant always takes (`if DEBUG:` with `DEBUG = True`)."""
    kept = []
    for gate in path.gates:
        test = getattr(gate.node, "test", None)
        value = constant_truth(names, test) if test is not None and gate.kind in ("if", "else") else None
        if value is None or (gate.kind == "if") != value:
            kept.append(gate)
    return tuple(kept)


def exited_early(
    steps: StepIndex, names, place: Place, statement: cst.CSTNode, scope_node: cst.CSTNode, rare=lambda test: False
) -> bool:
    """An earlier `if <test>: return/continue/break` in the scope may skip the statement: a guard like
    `if not self.debug: return`. Device checks, guards a module constant never takes
    (`if not DEBUG_MEMORY: return` with `DEBUG_MEMORY = True`), `raise` (an error path) and tests the
    caller knows to fire rarely (`rare(test)`: a NaN guard skips a bad batch, not most steps) do not count."""
    return any(
        not steps.is_device_check(test) and constant_truth(names, test) is not False and not rare(test)
        for test in earlier_jump_guards(place, statement, scope_node, errors=False)
    )


def on_host_branch(frames) -> bool:
    """Inside `if device == "cpu":` or `if not torch.cuda.is_available():`: the host path of a step,
    where reading a value back costs nothing."""
    for frame in frames:
        test = getattr(frame.node, "test", None) if getattr(frame, "kind", None) == "if" else None
        if test is None:
            continue
        code = node_code(test).replace(" ", "")
        if re.search(r"==['\"]cpu['\"]", code) or (code.startswith("not") and code.endswith("is_available()")):
            return True
    return False


def item_names(path: StepPath) -> set[str]:
    """The names the `for` loops inside the step (between its scope and the site) bind to their items."""
    from stabfix.model.training.step_frames import LoopFrame, target_names

    return {
        name.value
        for frame in path.between()
        if isinstance(frame, LoopFrame) and type(frame.node) is cst.For
        for name in target_names(frame.node.target)
    }


def filters_items(steps: StepIndex, path: StepPath, test: cst.BaseExpression) -> bool:
    """A test about the item an inner loop of the step is on (`if p.grad is None: continue`,
    `if param.grad is not None:`): it skips items, not steps. Interval tests never are."""
    own = item_names(path)
    if not own or steps.is_interval_test(test):
        return False
    uses = _ItemUses(own)
    visit_readonly(test, uses)
    return uses.found


class _ItemUses(cst.CSTVisitor):
    def __init__(self, own: set[str]) -> None:
        self.own = own
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value in self.own

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        visit_readonly(node.value, self)
        return False


def step_gates(steps: StepIndex, names, path: StepPath) -> tuple[BranchFrame, ...]:
    """`live_gates` without the per-item filters of inner loops (see `filters_items`)."""
    return tuple(
        gate
        for gate in live_gates(steps, names, path)
        if not (gate.kind == "if" and getattr(gate.node, "test", None) is not None and filters_items(steps, path, gate.node.test))
    )
