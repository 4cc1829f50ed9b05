"""SF413 unregistered-submodules: an `nn.Module` keeps layers in a plain list/dict, or weights as plain tensors.

A query over the model: which classes are modules (`classes`: through bases of the file and of other
scanned files), the `self.<attr>` bindings of each (`names.attribute_bindings`), and what every element
of a list or dict attribute is: a module built from a module class (torch's, the file's, another file's),
an `nn.Parameter`, or a name bound to one, also when it is added later (`container_fills`:
`self.layers.append(layer)`, `.extend`, `.insert`, `self.heads[k] = ...`). A tensor attribute counts when it
is made to require grad (`torch.randn(..., requires_grad=True)`, `.requires_grad_()`, `Variable(...,
requires_grad=True)`).

Silent when any binding of the attribute registers it (`nn.ModuleList(self.blocks)`, a module, a
`Parameter`), when a binding is something else the rule cannot see into, when the class registers
modules by hand (`add_module`, `register_module`, `register_parameter`, `setattr(self, ...)`), for classes not shown to be modules
(a plain class, a dataclass), and for lists of other things (sizes, names, functions).

The fix (unsafe: parameters, `state_dict()` keys and what `.to()` moves change) wraps the value in
`nn.ModuleList`/`nn.ModuleDict`/`nn.ParameterList`/`nn.Parameter`; offered when every element is known
and the attribute has no other binding.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.wrapping import torch_nn_spelling, wrapped
from stabfix.model.calls.modules import chain_receiver
from stabfix.model.source.container_fills import FILLS, elements
from stabfix.model.source.names import Binding
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape, callee_name
from stabfix.shape_modules import (grad_marked_attributes, may_be_fresh_tensor, may_be_module_class, may_be_trainable_tensor,
                                   may_build_module)

REGISTERS_BY_HAND = frozenset({"add_module", "register_module", "register_parameter"})
WRAPPERS = {("list", "module"): "ModuleList", ("list", "parameter"): "ParameterList",
            ("dict", "module"): "ModuleDict", ("dict", "parameter"): "ParameterDict"}


class UnregisteredSubmodules(Checker):
    code = "SF413"
    tokens = ("class",)
    also_needs = (("torch", "nn", "Module", "Lightning", "PreTrainedModel"),)
    words = (("class",),)  # reported on a class statement of this file (not `classmethod`, `dataclass`)
    # ... of a module class, which names a base (`class_kind`): not `class Config:` nor `class Config():`
    pattern = r"\bclass[\s\\]+\w+[\s\\]*(?:\[[^\n]*?\][\s\\]*)?\([\s\\]*[^\s)\\]"
    needs = ("names", "classes", "container_fills")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # an attribute binding in a class that may be a module: a list or dict display (or a name bound to one) showing an
        # element that may hold a module (`holds`) or filled with one later, or a tensor made to require grad
        marked, filled = grad_marked_attributes(shape), _filled(shape)
        return any(_may_hold(value, (target.attr,), shape, target.attr in marked, filled) for target, value, statement in
                   shape.attribute_stores() if (owner := shape.enclosing_class(statement)) and may_be_module_class(shape, owner))

    def __init__(self, context) -> None:
        super().__init__(context)
        self.class_defs: list[cst.ClassDef] = []
        self.by_hand: set[int] = set()  # classes that register modules themselves
        self.handed: dict[tuple[int, str], list[cst.Call]] = {}  # (class, attribute) -> calls it is passed to

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_defs.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        owner = self.model.enclosing.innermost_class()
        if owner is None:
            return
        func = node.func
        if type(func) is cst.Name and func.value == "setattr" or \
                type(func) is cst.Attribute and func.attr.value in REGISTERS_BY_HAND:
            self.by_hand.add(id(owner))
        for arg in node.args:  # `nn.Sequential(*self.layers)`: registered through the module it builds
            if type(arg.value) is cst.Attribute and type(arg.value.value) is cst.Name:
                self.handed.setdefault((id(owner), arg.value.attr.value), []).append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        classes, names = self.model.classes, self.model.names
        for cls in self.class_defs:
            if not classes.is_module_class(cls):
                continue
            for attribute, bindings in sorted(names.self_attributes.get(cls, {}).items()):
                self._judge(cls, attribute, bindings)

    def _judge(self, cls: cst.ClassDef, attribute: str, bindings: list[Binding]) -> None:
        key = (id(cls), attribute)
        shapes = [self._shape(b, cls, attribute) for b in bindings]
        if not shapes or any(shape is None for shape in shapes):
            return  # registered somewhere, or a value the rule cannot see into
        made = [(b, s) for b, s in zip(bindings, shapes) if s[0] not in ("augment", "same")]
        if len(made) != 1 and not (made and made[0][1][0] != "tensor"):
            return
        first, (container, _) = made[0]
        if container == "tensor":
            self._report(cls, attribute, first, "tensor", "parameter", fixable=len(bindings) == 1)
            return
        classes = self.model.classes
        if id(cls) in self.by_hand or any(classes.constructed_kind(call) == "module" for call in self.handed.get(key, [])):
            return
        held_elements = [e for shape in shapes for e in shape[1]] + self.model.container_fills.added(cls, attribute)
        held_elements = [e for e in held_elements if not self._also_an_attribute(cls, e)]
        kinds = [classes.holds(e) for e in held_elements]
        held = "module" if "module" in kinds else "parameter" if "parameter" in kinds else None
        if held is not None:
            self._report(cls, attribute, first, container, held, fixable=len(bindings) == 1 and len(set(kinds)) == 1)

    def _also_an_attribute(self, cls: cst.ClassDef, element: cst.BaseExpression) -> bool:
        """`enc = nn.Linear(...); self.enc = enc; self.parts = [enc, dec]`: registered under its own attribute."""
        return type(element) is cst.Name and any(
            type(b.bound_value) is cst.Name and b.bound_value.value == element.value
            for bindings in self.model.names.self_attributes.get(cls, {}).values() for b in bindings)

    def _shape(self, binding: Binding, cls: cst.ClassDef, attribute: str) -> Optional[tuple[str, list[cst.BaseExpression]]]:
        """("list"|"dict"|"tensor"|"augment"|"same", displayed elements), or None for anything else."""
        value = binding.bound_value if binding.kind != "augment" else binding.value
        if value is None:
            return None
        if binding.kind == "augment":
            return ("augment", elements(value)) if elements(value) is not None else None
        root = chain_receiver(value)
        if type(root) is cst.Attribute and type(root.value) is cst.Name and root.attr.value == attribute:
            return "same", []  # `self.w = self.w.cuda()`: the same object, moved
        if type(value) is cst.BinaryOperation and type(value.operator) is cst.Multiply:
            value = value.left  # `[nn.Linear(d, d)] * n`
        if type(value) is cst.Name and len(reaching := self.model.names.reaching(value)) == 1:
            local = reaching[0]  # `self.layers = layers`, a list the method built
            shape = self._shape(local, cls, attribute) if local.bound_value is not None else None
            added = self.model.container_fills.added(local.scope.node, value.value)
            return (shape[0], shape[1] + added) if shape is not None and shape[0] in ("list", "dict") else None
        if type(value) in (cst.List, cst.ListComp, cst.Tuple):
            return "list", elements(value) or []
        if type(value) in (cst.Dict, cst.DictComp):
            return "dict", elements(value) or []
        marked = self.model.container_fills.marked(cls, attribute)
        if self.model.classes.trainable_tensor(value) or marked and self.model.classes.fresh_tensor(value):
            return "tensor", []
        return None

    def _report(self, cls: cst.ClassDef, attribute: str, binding: Binding, container: str, held: str,
                fixable: bool = True) -> None:
        value = binding.value
        nn, imports = torch_nn_spelling(self.context.imports.aliases)
        if container == "tensor":
            wrapper, what = "Parameter", "a tensor that requires grad but is no `nn.Parameter`"
        else:
            wrapper, what = WRAPPERS[(container, held)], f"{'layers' if held == 'module' else 'parameters'} in a plain {container}"
        fix = None
        if fixable and value is not None and (container != "dict" or _string_keys(value)):
            fix = Fix("unsafe", f"wrap the value in `{nn}.{wrapper}`", {value: wrapped(value, f"{nn}.{wrapper}")}, imports)
        them = "it" if container == "tensor" else "them"
        self.report(binding.node, (
            f"`{cls.name.value}` keeps {what} in `self.{attribute}` (`{code_of(value, 50)}`): `.parameters()`, "
            f"`.to()`/`.cuda()` and `state_dict()` do not see {them}, so an optimizer built from `.parameters()` "
            f"never trains {them} and checkpoints never save {them}; use `{nn}.{wrapper}`"), fix)


def _filled(shape: Shape) -> set[str]:
    """The attributes and names the file fills with what may hold a module: `x.a.append(m)`, `x.a[k] = m`, `l.extend([m])`."""
    found: set[str] = set()
    for call in shape.calls(*FILLS):
        holder, added = call.func.value if type(call.func) is ast.Attribute else None, [*call.args, *(k.value for k in call.keywords)]
        shown = (shape.displayed(added[-1], True) or []) if callee_name(call) == "extend" and added else [getattr(a, "value", a) for a in added]
        if holder is not None and any(_holds(e, shape) for e in shown):
            found.add(getattr(holder, "attr", getattr(holder, "id", "")))
    return found | {getattr(t.value, "attr", getattr(t.value, "id", "")) for node in shape.nodes(ast.Assign)
                    for t in node.targets if type(t) is ast.Subscript and _holds(node.value, shape)}


def _may_hold(value: ast.expr, holders: tuple[str, ...], shape: Shape, marked: bool, filled: set[str]) -> bool:
    """Whether the value bound to `holders` (the attribute, then the names it is read through) may be reported; `marked`:
    the attribute is made to require grad in place."""
    value = value.left if type(value) is ast.BinOp and type(value.op) is ast.Mult else value  # `[nn.Linear(d, d)] * n`
    if type(value) is ast.Name:  # a list or dict the method (or the module) bound to the name, maybe filled after
        return len(holders) > 4 or value.id in filled or any(
            _may_hold(v, (*holders, value.id), shape, False, filled) for v in shape.values_of(value.id, value))
    if (shown := shape.displayed(value)) is not None:
        return not filled.isdisjoint(holders) or any(_holds(e, shape) for e in shown)
    return len(holders) == 1 and (may_be_trainable_tensor(shape, value) or marked and may_be_fresh_tensor(shape, value))


def _holds(element: ast.expr, shape: Shape, depth: int = 0) -> bool:
    """Whether an element may hold a module or parameter (`classes.holds`): a call building one, or a name assigned one."""
    if type(element) is ast.Name:
        return depth < 4 and any(_holds(v, shape, depth + 1) for v in shape.values_of(element.id, element))
    return may_build_module(shape, element)


def _string_keys(value: cst.BaseExpression) -> bool:
    """A `ModuleDict` takes only string keys without dots: literal ones are known to be."""
    if type(value) is cst.Dict:
        return all(type(e) is cst.DictElement and type(e.key) is cst.SimpleString
                   and "." not in str(e.key.evaluated_value) for e in value.elements)
    return False

