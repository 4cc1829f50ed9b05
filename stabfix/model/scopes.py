"""What one scope (a function, or the module) binds: parameters, every binding of each local with the
value it receives (unpacking spelled out where it can be), loop targets with what they iterate, and
whether a binding runs with autograd off (`with torch.no_grad():` or a `@torch.no_grad()` function)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.model.devices import is_grad_disabling_context
from stabfix.model.syntax import names_in


@dataclass
class ScopeBinding:
    value: cst.BaseExpression | None  # None: unpacked or augmented, value unknown
    grad_off: bool
    statement: cst.CSTNode


def unpacked_values(
    target: cst.Tuple | cst.List, value: cst.BaseExpression | None
) -> list[cst.BaseExpression | None]:
    """What each element of an unpacking target receives: `x, y = a[0], a[1]` binds `x` to `a[0]`, and
    `h, c = rnn(x)` binds `h` to (a stand-in for) `rnn(x)[0]`; None where it is not spelled out (a
    starred element, lengths that differ)."""
    elements = target.elements
    if any(isinstance(e, cst.StarredElement) for e in elements):
        return [None] * len(elements)
    if isinstance(value, (cst.Tuple, cst.List)):
        if len(value.elements) == len(elements) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            return [e.value for e in value.elements]
        return [None] * len(elements)
    if value is None:
        return [None] * len(elements)
    # an element of the value: the stand-in keeps the value itself as a child, so data flow through it holds
    return [cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]) for i in range(len(elements))]


class ScopeBindings(cst.CSTVisitor):
    def __init__(self, root: cst.FunctionDef | cst.Module, qualify, grad_off: bool = False) -> None:
        super().__init__()
        self.root = root
        self.qualify = qualify
        self.params: dict[str, cst.Param] = {}
        self.bindings: dict[str, list[ScopeBinding]] = {}
        self.loop_iters: dict[str, cst.BaseExpression] = {}
        self.globals: set[str] = set()
        self.grad_off = [grad_off]
        root.visit(self)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is not self.root:
            self.bindings.setdefault(node.name.value, []).append(ScopeBinding(None, False, node))
            return False
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            self.params[param.name.value] = param
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                self.params[star.name.value] = star
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bindings.setdefault(node.name.value, []).append(ScopeBinding(None, False, node))
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_With(self, node: cst.With) -> None:
        off = any(is_grad_disabling_context(item.item, self.qualify) for item in node.items)
        self.grad_off.append(self.grad_off[-1] or off)
        for item in node.items:
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                self._bind(item.asname.name.value, None, node)

    def leave_With(self, original_node: cst.With) -> None:
        self.grad_off.pop()

    def _bind(self, name: str, value: cst.BaseExpression | None, statement: cst.CSTNode) -> None:
        self.bindings.setdefault(name, []).append(ScopeBinding(value, self.grad_off[-1], statement))

    def _bind_target(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, statement: cst.CSTNode
    ) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, value, statement)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = unpacked_values(target, value)
            for element, element_value in zip(target.elements, values):
                self._bind_target(element.value, element_value, statement)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, None, statement)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, None, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, node)

    def visit_For(self, node: cst.For) -> None:
        for name in names_in(node.target):
            self.loop_iters[name] = node.iter
            self._bind(name, None, node)

    def visit_Global(self, node: cst.Global) -> None:
        self.globals.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.globals.update(item.name.value for item in node.names)

    def binds_locally(self, name: str) -> bool:
        return name not in self.globals and (name in self.params or name in self.bindings)
