"""What one function's own body does in place, read from its syntax (the `summaries` part turns these
into effects): the containers it stores into, the names it makes require grad, the tensors it detaches.
Nested functions, classes and lambdas are not the function's own body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.flow.gradient_use import is_requires_grad_call, is_true
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.node_fields import code_children

STORE_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


@dataclass(frozen=True)
class BodyEffects:
    """What one function's own body does in place, from one walk of it."""

    # what it stores into: `self.buffer.append(x)`, `cache[k] = v` on a parameter `cache`
    stores: tuple[str, ...]
    # the names it makes require grad in place, whatever it does with the result: `t.requires_grad_()`
    # (also inside `return t.requires_grad_(True)`), `t.requires_grad = True`; not a name it rebinds
    # anywhere (`t = t.detach()` makes it another tensor than the one handed in) or reads the gradient of
    marked: tuple[str, ...]
    kept: frozenset[str]  # the names it rebinds or reads the gradient of: it keeps those for itself
    # what it cuts from the graph in place: `x.detach_()` on a name, attribute or element (`h[0]`; `h[*]`
    # for a variable index), or `x = x.detach()` re-binding an attribute (`self.h`)
    detaches: tuple[str, ...]
    calls: tuple[cst.Call, ...]  # the calls of its body (not of its decorators, defaults or annotations)
    # of `marked`, those set by `t.requires_grad = True`, which torch allows only on a leaf (no history)
    setters: frozenset[str] = frozenset()


def body_effects(function: cst.FunctionDef) -> BodyEffects:
    """One walk of the function's own body (see `BodyEffects`): the function's decorators, parameters
    and body, not the functions, classes and lambdas nested in it."""
    finder = _Finder()
    handlers = _HANDLERS
    # each child of the `def` with what it holds before the next, as one stack would visit them: the last first
    for root in reversed(code_children(function)):
        in_body = root is function.body
        pending = [root]
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind in _NOT_OWN:  # exact types (no libcst node type subclasses them): no ABC isinstance per node
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(finder, node, in_body)
            pending.extend(code_children(node))  # no handler reads trivia (whitespace, punctuation, operators)
    kept = finder.rebound | finder.read
    return BodyEffects(tuple(finder.stores), tuple(name for name in finder.marked if name not in kept),
                       frozenset(kept), tuple(finder.detaches), tuple(finder.calls), frozenset(finder.setters))


_NOT_OWN = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


class _Finder:
    def __init__(self) -> None:
        self.stores: list[str] = []
        self.marked: list[str] = []
        self.setters: set[str] = set()
        self.rebound: set[str] = set()
        self.read: set[str] = set()  # its gradient read here: the helper wants the flag
        self.detaches: list[str] = []
        self.calls: list[cst.Call] = []

    def call(self, node: cst.Call, in_body: bool) -> None:
        if in_body:
            self.calls.append(node)
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in STORE_METHODS:
                spelled = dotted_name(func.value)
                if spelled is not None:
                    self.stores.append(spelled)
            elif method == "detach_":
                spelled = _element_spelling(func.value)
                if spelled is not None:
                    self.detaches.append(spelled)
        if is_requires_grad_call(node) and type(node.func.value) is cst.Name:  # type: ignore[attr-defined]
            self.marked.append(node.func.value.value)  # type: ignore[attr-defined]
        if (dotted_name(func) or "").split(".")[-2:] in (["autograd", "grad"], ["grad"]):
            # `torch.autograd.grad(loss, t)`: the gradient with respect to its inputs is read (a bare `grad(...)`
            # counts too: taking it for a read only ever keeps a finding back)
            for arg in node.args[1:]:
                self.read.update(name.value for name in _names_in(arg.value))

    def assign(self, node: cst.Assign, in_body: bool) -> None:
        for target in node.targets:
            attr = target.target
            if (type(attr) is cst.Attribute and attr.attr.value == "requires_grad"
                    and type(attr.value) is cst.Name and is_true(node.value)):
                self.marked.append(attr.value.value)
                self.setters.add(attr.value.value)
        value = node.value
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Attribute:
            return
        target = dotted_name(node.targets[0].target)
        if (target is not None and type(value) is cst.Call and type(value.func) is cst.Attribute
                and value.func.attr.value == "detach" and dotted_name(value.func.value) == target):
            self.detaches.append(target)

    def attribute(self, node: cst.Attribute, in_body: bool) -> None:
        if node.attr.value in ("grad", "register_hook", "retain_grad", "backward") and type(node.value) is cst.Name:
            self.read.add(node.value.value)

    def assign_target(self, node: cst.AssignTarget, in_body: bool) -> None:
        if type(node.target) is cst.Subscript:
            spelled = dotted_name(node.target.value)
            if spelled is not None:
                self.stores.append(spelled)
        self.rebound.update(name.value for name in _bound_names(node.target))

    def bound_target(self, node: cst.AugAssign | cst.For, in_body: bool) -> None:
        self.rebound.update(name.value for name in _bound_names(node.target))


_HANDLERS = {cst.Call: _Finder.call, cst.Assign: _Finder.assign, cst.Attribute: _Finder.attribute,
             cst.AssignTarget: _Finder.assign_target, cst.AugAssign: _Finder.bound_target, cst.For: _Finder.bound_target}


def _bound_names(target: cst.BaseExpression) -> list[cst.Name]:
    if type(target) is cst.Name:
        return [target]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _bound_names(element.value)]
    if type(target) is cst.StarredElement:
        return _bound_names(target.value)
    return []


def _element_spelling(node: cst.BaseExpression) -> Optional[str]:
    """`h`, `self.h`, `h[0]`, `h[*]` (a variable index); None for anything else."""
    if type(node) is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        base = dotted_name(node.value)
        index = node.slice[0].slice.value
        if base is None:
            return None
        if type(index) is cst.Integer:
            return f"{base}[{index.value}]"
        return f"{base}[*]" if type(index) is cst.Name else None
    return dotted_name(node)


def _names_in(expr: cst.BaseExpression) -> list[cst.Name]:
    """The plain names an argument spells directly or in a tuple/list (`t`, `(x, t)`, `[t]`)."""
    if type(expr) is cst.Name:
        return [expr]
    if type(expr) in (cst.Tuple, cst.List):
        return [name for element in expr.elements for name in _names_in(element.value)]
    return []
