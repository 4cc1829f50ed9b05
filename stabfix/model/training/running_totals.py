"""Running totals and logs: where the file sums a value into a holder or stores it there (`total += loss`,
`total = total + loss`, `total, n = total + loss, n + 1`, `logs["loss"] += loss`, `losses.append(loss)` /
`.extend(...)` / `.insert(i, ...)`; `losses += (l,)` concatenates and is none), recorded in the traversal
with their function, class, enclosing loops and step frames (`Accumulation`), and whether the holder keeps
its value from one iteration (or step call) to the next: `outlives_iteration(site, holder)` (a local bound
before the loop it is updated in and not rebound in the iteration, or state on `self` / a module global not
reset earlier in the same iteration or call, updated in a loop or a step function). Asked by SF103.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.syntax import TUPLES_AND_LISTS, node_code
from stabfix.model.training.step_frames import Frame

_APPENDS = {"append": 0, "extend": 0, "insert": 1}


@dataclass
class Accumulation:
    node: cst.CSTNode  # the statement expression (AugAssign, Assign) or the append call
    holder: cst.BaseExpression  # what keeps the value: `total`, `logs["loss"]`, `self.losses`
    value: cst.BaseExpression  # what is added or stored
    function: Optional[cst.FunctionDef]
    cls: Optional[cst.ClassDef]
    loops: tuple[tuple[cst.CSTNode, int], ...]  # enclosing loops of the function, with their start order
    frames: tuple[Frame, ...]
    order: int


class RunningTotals(cst.BatchableCSTVisitor):
    def __init__(self, enclosing, names, steps) -> None:
        super().__init__()
        self.enclosing = enclosing
        self.names = names
        self.steps = steps
        self.sites: list[Accumulation] = []
        self._loops: list[list[tuple[cst.CSTNode, int]]] = [[]]
        # places of resets, by (holder, id(function)): each site asks for its own holder and function
        self._resets: dict[tuple[str, int], list[int]] = {}

    # -- traversal -------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._loops.append([])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._loops.pop()

    def visit_For(self, node: cst.For) -> None:
        self._loops[-1].append((node, self.names.position))

    def leave_For(self, original_node: cst.For) -> None:
        self._loops[-1].pop()

    visit_While, leave_While = visit_For, leave_For

    def _record(self, node, holder, value) -> None:
        function, cls = self.enclosing.innermost_function(), self.enclosing.innermost_class()
        self.sites.append(Accumulation(node, holder, value, function, cls, tuple(self._loops[-1]),
                                       self.steps.frames(), self.names.position))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:  # `losses += (l,)` concatenates: not a sum
        if type(node.operator) in (cst.AddAssign, cst.SubtractAssign) and type(node.value) not in TUPLES_AND_LISTS:
            self._record(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        for holder, value in _unpacked_targets(node):  # `total = total + loss`, `total, n = total + loss, n + 1`
            if type(value) is not cst.BinaryOperation or type(value.operator) is not cst.Add:
                continue
            target = _code(holder)
            if _code(value.left) == target:
                self._record(node, holder, value.right)
            elif _code(value.right) == target:
                self._record(node, holder, value.left)

    def leave_Assign(self, original_node: cst.Assign) -> None:  # resets: `self.loss = 0` at each iteration's top
        spelled = [dotted_name(holder) for holder, _ in _unpacked_targets(original_node)]
        function = self.enclosing.innermost_function()
        for name in spelled:
            if name:
                self._resets.setdefault((name, id(function)), []).append(self.names.position)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _APPENDS:
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            index = _APPENDS[func.attr.value]
            if len(positional) == index + 1:
                self._record(node, func.value, positional[index])

    # -- queries ---------------------------------------------------------------------------------------
    def outlives_iteration(self, site: Accumulation, holder: str) -> bool:
        """The holder keeps its value from one iteration (or step call) to the next."""
        root = holder.split(".", 1)[0].split("[", 1)[0]
        if root == "self" or root not in self._scope(site).bindings:
            start = site.loops[-1][1] if site.loops else 0
            if any(start <= o < site.order for o in self._resets.get((holder, id(site.function)), ())):
                return False  # reset earlier in the same iteration or call
            return bool(site.loops) or self.steps.step_path(site.frames) is not None
        start, bindings = (site.loops[-1][1] if site.loops else 0), self._scope(site).bindings.get(root, [])
        fresh = [b for b in bindings if b.kind in ("assign", "for", "unpack", "with") and start < b.order <= site.order
                 and b.node is not site.node and not b.conditional]
        return bool(site.loops) and any(b.order <= start for b in bindings) and not fresh

    def _scope(self, site: Accumulation):
        return self.names.scopes[site.function or self.names.module_scope.node]


def _code(node: cst.CSTNode) -> str:
    return node_code(node)


def _unpacked_targets(node: cst.Assign) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Each target of an assignment with the value it receives: the whole value for a plain target, each
    element of a displayed tuple for a tuple target (`total, n = total + loss, n + 1`)."""
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    for target in node.targets:
        if type(target.target) not in TUPLES_AND_LISTS:  # exact types (see node_fields.node_kinds)
            pairs.append((target.target, node.value))
            continue
        shown = node.value.elements if type(node.value) in TUPLES_AND_LISTS else ()
        if len(shown) != len(target.target.elements):
            continue
        for position, element in enumerate(target.target.elements):
            value = torch_ops.unpacked(node.value, (position,))
            if value is not None and type(element) is not cst.StarredElement:
                pairs.append((element.value, value))
    return pairs
