"""Structural gates' questions about module classes, answered over CPython's tree as supersets of what the model's
`classes` part (`stabfix.model.calls.module_classes`) decides: whether a class may be an `nn.Module`, whether a
call may build a module or a parameter, which attributes the file makes require grad in place.

A class is a module by a base: one of torch's module classes (or a framework's) named through the imports, a class
of this file that is one, or a class of the scan with one of torch's module classes among its ancestors
(`qualified_kind`). A call builds a module when it calls such a class (`nn.Linear(...)`, `Block(d).to(dev)`); `nn.Parameter(...)`
builds a parameter. Names are read through every import and plain alias of the file (`shape_names`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from stabfix.model.calls.module_classes import FRESH_TENSOR_FUNCTIONS, PLAIN_BASES, is_torch_module_name
from stabfix.model.calls.modules import SELF_RETURNING_METHODS
from stabfix.shape_names import lineage_in_the_scan, qualified_names

if TYPE_CHECKING:
    from stabfix.shape import Shape

_MAX_DEPTH = 8


def may_be_module_class(shape: "Shape", cls: ast.ClassDef) -> bool:
    """Whether `classes.is_module_class` may hold for the class: a positional base may be a module class."""
    known = shape.__dict__.setdefault("_may_be_module_class", {})
    if id(cls) not in known:
        known[id(cls)] = _may_be_module_class(shape, cls, 0)
    return known[id(cls)]


def _may_be_module_class(shape: "Shape", cls: ast.ClassDef, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    for base in cls.bases:
        base = base.value if type(base) is ast.Subscript else base  # type: ignore[attr-defined]
        if type(base) is ast.Name and base.id == "object":  # type: ignore[attr-defined]
            continue
        if _may_name_a_module_class(shape, base, depth):
            return True
    return False


def may_build_module(shape: "Shape", element: ast.AST) -> bool:
    """Whether `classes.holds` may say "module" or "parameter" of a call (through `.to(d)`, `.cuda()` and the like)."""
    element = _chain_receiver(element)
    if type(element) is not ast.Call:
        return False
    func = element.func  # type: ignore[attr-defined]
    return "torch.nn.Parameter" in qualified_names(shape, func) or _may_name_a_module_class(shape, func, 0)


def _may_name_a_module_class(shape: "Shape", expr: ast.AST, depth: int) -> bool:
    """Whether `expr` may name a module class: a class of the file by that name that may be one, or a qualified name
    that is torch's or a framework's module class, or a class of the scan."""
    if type(expr) is ast.Name:
        local = [node for node in shape.nodes(ast.ClassDef) if node.name == expr.id]  # type: ignore[attr-defined]
        if any(_may_be_module_class(shape, node, depth + 1) for node in local):  # type: ignore[arg-type]
            return True
    for qualified in sorted(qualified_names(shape, expr)):
        if is_torch_module_name(qualified):
            return True
        if qualified in PLAIN_BASES or qualified.startswith("torch.optim."):
            continue  # known to be no module (`qualified_kind`)
        if any(methods is None and is_torch_module_name(name) for name, methods in lineage_in_the_scan(shape, qualified)):
            return True  # a class of the scan with one of torch's module classes among its ancestors
    return False


def grad_marked_attributes(shape: "Shape") -> frozenset[str]:
    """The attribute names the file makes require grad in place, as `container_fills.marked` reads it (any receiver):
    `x.w.requires_grad_()`, `x.w.requires_grad_(True)`, `x.w.requires_grad = True`."""
    found = {call.func.value.attr for call in shape.calls("requires_grad_")  # type: ignore[attr-defined]
             if type(call.func) is ast.Attribute and type(call.func.value) is ast.Attribute and _true_or_nothing(call)}
    for node in shape.nodes(ast.Assign):
        for target in node.targets:  # type: ignore[attr-defined]
            if type(target) is ast.Attribute and target.attr == "requires_grad" and type(target.value) is ast.Attribute \
                    and _is_true(node.value):  # type: ignore[attr-defined]
                found.add(target.value.attr)  # type: ignore[attr-defined]
    return frozenset(found)


def may_be_trainable_tensor(shape: "Shape", value: ast.AST) -> bool:
    """Whether `classes.trainable_tensor` may hold: `torch.randn(n, requires_grad=True)`, `torch.zeros(n).requires_grad_()`,
    `Variable(t, requires_grad=True)`."""
    if type(value) is not ast.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute and func.attr == "requires_grad_":  # type: ignore[attr-defined]
        return _true_or_nothing(value) and may_be_fresh_tensor(shape, func.value)  # type: ignore[arg-type,attr-defined]
    variable = any(q.startswith("torch.autograd.") and q.endswith("Variable") for q in qualified_names(shape, func))
    return (variable or may_be_fresh_tensor(shape, value)) and any(
        keyword.arg == "requires_grad" and _is_true(keyword.value) for keyword in value.keywords)  # type: ignore[attr-defined]


def may_be_fresh_tensor(shape: "Shape", value: ast.AST) -> bool:
    """Whether `classes.fresh_tensor` may hold: a call of one of torch's tensor factories (through `.to(d)` and the like)."""
    root = _chain_receiver(value)
    return type(root) is ast.Call and any(q.startswith("torch.") and q.rsplit(".", 1)[-1] in FRESH_TENSOR_FUNCTIONS
                                          for q in qualified_names(shape, root.func))  # type: ignore[attr-defined]


def _chain_receiver(expr: ast.AST) -> ast.AST:
    """`modules.chain_receiver`: `model` for `model.to(d).cuda()`."""
    while type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in SELF_RETURNING_METHODS:  # type: ignore[attr-defined]
        expr = expr.func.value  # type: ignore[attr-defined]
    return expr


def _true_or_nothing(call: ast.Call) -> bool:
    """No argument, or a first one (`container_fills` reads keywords among the arguments too) that is `True`."""
    given = [*call.args, *(keyword.value for keyword in call.keywords)]
    return not given or _is_true(given[0])


def _is_true(expr: ast.AST) -> bool:
    return type(expr) is ast.Constant and expr.value is True  # type: ignore[attr-defined]
