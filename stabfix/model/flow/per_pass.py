"""Values that change on every pass of a loop: a schedule computed from the loop's counter, a running count.

Built on `Names` (bindings with their order) and the loop's span in that order (`Events.loop_span`); no
traversal of its own. Asked of an expression inside a loop:

- `changes_each_pass(expr, loop, scope, span)`: the value is arithmetic over the loop's own target
  (`lr * 0.5 ** epoch`, `base_lr * 0.1 ** (i // 1000)`) or over a name the pass re-binds from its own
  previous value (`lr *= 0.95`, `lr = lr * decay`), directly or through names bound in the pass. A call
  (`sample_lr(trial)`) or an attribute (`stage.lr`) is not shown to change: the code does not say how.
- `running_count(expr, loop, scope, span)`: the value counts the passes, 1, 2, 3, ...: the loop's index
  plus a constant (`i + 1` of `for i, b in enumerate(loader)` or `for i in range(n)`, `enumerate(loader,
  1)`'s index) or a name the pass increments by a constant (`seen += 1`, `count = count + 1`).
- `fresh_each_pass(expr, loop, scope, span, names, cls)`: the objects the value reads are other objects on
  each pass (the tensors handed to an optimizer: a fresh learner each task, no state to carry over): the
  loop's own target (`for model in ensemble:`), a name the pass binds (`learner = deepcopy(model)`) unless
  to another name for an object bound before the loop (`model = agents[0]`, `model = self.net`: a name,
  attribute or constant index whose root the pass does not rebind), or a `self.<attr>` of `cls` the pass
  binds (`self.lambda_op = torch.tensor(..., requires_grad=True)`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.flow.parameters import names_in, target_names
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.source.scopes import Scope

_MAX_DEPTH = 4
_ARITHMETIC = (cst.BinaryOperation, cst.UnaryOperation)


def changes_each_pass(expr: cst.BaseExpression, loop: cst.CSTNode, scope: Scope, span: tuple[int, int]) -> bool:
    return _changes(expr, loop, scope, span, in_arithmetic=False, seen=frozenset(), depth=0)


def running_count(expr: cst.BaseExpression, loop: cst.CSTNode, scope: Scope, span: tuple[int, int]) -> bool:
    expr = _unparen(expr)
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add:
        for counter, step in ((expr.left, expr.right), (expr.right, expr.left)):
            if type(_unparen(step)) is cst.Integer and _counting_index(counter, loop):
                return True
    if type(expr) is cst.Name:
        if _counting_index(expr, loop) and _index_starts_at_one(loop):
            return True
        return any(_increments(binding, expr.value) for binding in _bindings_in_pass(expr.value, scope, span))
    return False


def fresh_each_pass(expr: cst.BaseExpression, loop: cst.CSTNode, scope: Scope, span: tuple[int, int], names: Names,
                    cls: Optional[cst.ClassDef]) -> bool:
    start, end = span
    read = names_in(expr) - {"self"}
    if type(loop) is cst.For and read & target_names(loop.target):
        return True  # other tensors on each pass (`for model in ensemble:`): no state to carry over
    if any(start <= b.order <= end and not _same_object(b.bound_value, scope, start, end)
           for name in read for b in scope.bindings.get(name, [])):
        return True
    attributes = {name.split(".")[1] for name in _dotted_in(expr) if name.startswith("self.")}
    return cls is not None and any(
        start <= b.order <= end for attribute in attributes for b in names.attribute_bindings(cls, attribute)
    )  # `self.lambda_op = torch.tensor(..., requires_grad=True)` in the same pass


def _same_object(value: Optional[cst.BaseExpression], scope: Scope, start: int, end: int) -> bool:
    """Another name for an object bound before the loop: a name, attribute or constant index whose root the
    pass does not rebind (`agents[i]` is another object on each pass)."""
    node = value
    while type(node) in (cst.Attribute, cst.Subscript):
        if type(node) is cst.Subscript and not all(
            type(element.slice) is cst.Index and type(element.slice.value) in (cst.Integer, cst.SimpleString)
            for element in node.slice
        ):
            return False  # `agents[i]`: another object on each pass
        node = node.value
    if type(node) is not cst.Name:
        return False
    return not any(start <= b.order <= end for b in scope.bindings.get(node.value, []))


def _dotted_in(node: cst.CSTNode) -> list[str]:
    collector = _DottedCollector()
    visit_readonly(node, collector)
    return collector.found


class _DottedCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_Attribute(self, attribute: cst.Attribute) -> bool:
        name = dotted_name(attribute)
        if name is not None:
            self.found.append(name)
            return False
        return True


def _changes(expr, loop, scope, span, in_arithmetic: bool, seen: frozenset, depth: int) -> bool:
    expr = _unparen(expr)
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, _ARITHMETIC):
        parts = (expr.left, expr.right) if type(expr) is cst.BinaryOperation else (expr.expression,)
        return any(_changes(part, loop, scope, span, True, seen, depth + 1) for part in parts)
    if type(expr) is not cst.Name:
        return False
    if in_arithmetic and type(loop) is cst.For and expr.value in target_names(loop.target):
        return True
    if expr.value in seen:
        return in_arithmetic  # `lr = lr * decay`: re-bound from its own previous value
    for binding in _bindings_in_pass(expr.value, scope, span):
        if binding.kind == "augment":
            return True  # `lr *= 0.95`
        value = binding.bound_value
        if value is not None and _changes(value, loop, scope, span, False, seen | {expr.value}, depth + 1):
            return True
    return False


def _bindings_in_pass(name: str, scope: Scope, span: tuple[int, int]) -> list:
    start, end = span
    return [binding for binding in scope.bindings.get(name, []) if start <= binding.order <= end]


def _counting_index(expr: cst.BaseExpression, loop: cst.CSTNode) -> bool:
    """`i` is the index `enumerate(...)` or `range(n)` (from 0 or 1, step 1) hands this loop."""
    expr = _unparen(expr)
    if type(expr) is not cst.Name or type(loop) is not cst.For or type(loop.iter) is not cst.Call:
        return False
    callee = _callee_name(loop.iter)
    target = loop.target
    if callee == "enumerate" and type(target) in (cst.Tuple, cst.List) and target.elements:
        first = target.elements[0].value
        return type(first) is cst.Name and first.value == expr.value
    if callee == "range" and type(target) is cst.Name and target.value == expr.value:
        return len(loop.iter.args) <= 2  # no step argument: it counts by one
    return False


def _index_starts_at_one(loop: cst.For) -> bool:
    """`enumerate(loader, 1)`, `enumerate(loader, start=1)`, `range(1, n + 1)`."""
    call = loop.iter
    assert type(call) is cst.Call
    start: Optional[cst.BaseExpression] = None
    if _callee_name(call) == "enumerate" and len(call.args) >= 2:
        start = call.args[1].value
    if _callee_name(call) == "range" and len(call.args) == 2:
        start = call.args[0].value
    return type(start) is cst.Integer and start.evaluated_value >= 1


def _increments(binding, name: str) -> bool:
    """`seen += 1` or `seen = seen + 1`: the pass adds a constant to the name."""
    node = binding.node
    if binding.kind == "augment" and type(node) is cst.AugAssign:
        return type(node.operator) is cst.AddAssign and type(_unparen(node.value)) is cst.Integer
    value = binding.bound_value
    if binding.kind == "assign" and type(value) is cst.BinaryOperation and type(value.operator) is cst.Add:
        pair = (_unparen(value.left), _unparen(value.right))
        return any(type(a) is cst.Name and a.value == name and type(b) is cst.Integer for a, b in (pair, pair[::-1]))
    return False


def _callee_name(call: cst.Call) -> Optional[str]:
    return call.func.value if type(call.func) is cst.Name else None


def _unparen(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=[], rpar=[]) if getattr(expr, "lpar", None) else expr
