"""What the code adds to a list or dict after building it, and which `self.<attr>` it makes require grad in place:
the `container_fills` part, recorded in the traversal with the `enclosing` part. A container is keyed by its
holder: `self.<attr>` in a method (the class and the attribute) or a local name (the function and the name).

- `added(owner, name)`: the elements the code adds to the container: `.append(x)`, `.insert(i, x)`,
  `.extend([a, b])` (the displayed elements; nothing for an `.extend` of a value that is no display), and
  `holder[k] = x`. Calls are recorded in the code of a class (its methods and the functions nested in them),
  item assignments everywhere. `owner` is the `ClassDef` for `self.<attr>`, the `FunctionDef` for a local.
- `marked(cls, attribute)`: a method makes `self.<attribute>` require grad in place (`self.w.requires_grad_()`,
  `.requires_grad_(True)`, `self.w.requires_grad = True`).
- `elements(value)`: the elements a list, tuple or dict display or comprehension shows (a comprehension: its
  element expression), or None for anything else.

An `nn.Module` that keeps layers in a plain list filled this way registers none of them (SF413).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.scopes import first_parameter

FILLS = frozenset({"append", "extend", "insert"})


class ContainerFills(cst.BatchableCSTVisitor):
    def __init__(self, enclosing: EnclosingDefinitions) -> None:
        super().__init__()
        self.enclosing = enclosing
        # (class, attribute) or (function, local name) -> the elements added to it by `.append` and the like
        self._fills: dict[tuple[int, str], list[cst.BaseExpression]] = {}
        self._marked: set[tuple[int, str]] = set()  # `self.w.requires_grad_()`, `self.w.requires_grad = True`

    def added(self, owner: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
        return self._fills.get((id(owner), name), [])

    def marked(self, cls: cst.ClassDef, attribute: str) -> bool:
        return (id(cls), attribute) in self._marked

    def visit_Call(self, node: cst.Call) -> None:
        if self.enclosing.innermost_class() is None:
            return
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "requires_grad_" and \
                (not node.args or _is_true(node.args[0].value)) and (key := self._holder_key(func.value)):
            self._marked.add(key)
        if type(func) is cst.Attribute and func.attr.value in FILLS and node.args:
            key = self._holder_key(func.value)
            added = node.args[-1].value
            if key is not None:
                found = elements(added) if func.attr.value == "extend" else [added]
                self._fills.setdefault(key, []).extend(found if found is not None else [])

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            slot = target.target
            if type(slot) is cst.Subscript and (key := self._holder_key(slot.value)):
                self._fills.setdefault(key, []).append(node.value)
            elif type(slot) is cst.Attribute and slot.attr.value == "requires_grad" and _is_true(node.value) \
                    and type(slot.value) is cst.Attribute and (key := self._holder_key(slot.value)):
                self._marked.add(key)

    def _holder_key(self, holder: cst.BaseExpression) -> Optional[tuple[int, str]]:
        """`self.layers` -> (its class, "layers"); a local `layers` -> (its function, "layers")."""
        if type(holder) is cst.Attribute and type(holder.value) is cst.Name:
            owner, method = self.enclosing.innermost_class(), self.enclosing.innermost_function()
            on_self = method is not None and first_parameter(method) == holder.value.value
            return (id(owner), holder.attr.value) if owner is not None and on_self else None
        if type(holder) is cst.Name:
            function = self.enclosing.innermost_function()
            return (id(function), holder.value) if function is not None else None
        return None


def elements(value: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
    if type(value) in (cst.List, cst.Tuple):
        return [e.value for e in value.elements if type(e) is not cst.StarredElement]
    if type(value) in (cst.ListComp, cst.GeneratorExp):
        return [value.elt]
    if type(value) is cst.Dict:
        return [e.value for e in value.elements if type(e) is cst.DictElement]
    if type(value) is cst.DictComp:
        return [value.value]
    return None


def _is_true(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "True"
