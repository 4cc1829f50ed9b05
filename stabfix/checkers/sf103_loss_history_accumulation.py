"""SF103 loss-history-accumulation: a tensor with autograd history summed or stored across iterations.

A query over the model: the `history` part says which expressions still carry a graph and whether a
backward pass (or the function's return) later uses what was accumulated; the `uses` part says what
later code does with the holder and whether it is reset at every optimizer step. Sites:
`total += loss`, `total = total + loss`, `logs["loss"] += loss`, `losses.append(loss)` /
`.extend(...)` / `.insert(i, ...)`, where the holder outlives the iteration: a local bound before the
loop it is updated in, or state on `self` / a module global updated in a step function.
Silent when it is differentiated later, returned to the caller by a function that neither trains nor
evaluates itself (a `compute_loss` summing parts), reset at every optimizer step (an accumulation
window), reset, under `no_grad`, a model output collected outside a training or evaluation loop, or in
a test that asserts (`modes.in_harness`).
Fix: store `.detach()` of the value (same values, dtype, device and type; only the graph is dropped):
safe when every later read of the holder is seen in the file and none differentiates it or shows its
autograd state (printing a tensor shows its `grad_fn`); unsafe when it is state on `self`/a module
global or reaches code the file does not show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for
from stabfix.model.calls import torch_ops
from stabfix.model.flow.history import LOSS
from stabfix.model.flow.later_uses import GRAPH, NUMBER, TENSOR, strongest
from stabfix.model.source.imports import dotted_name
from stabfix.model.training.modes import in_harness
from stabfix.model.training.step_frames import Frame, FunctionFrame

_APPENDS = {"append": 0, "extend": 0, "insert": 1}


@dataclass
class _Site:
    node: cst.CSTNode  # the statement expression (AugAssign, Assign) or the append call
    holder: cst.BaseExpression  # what keeps the value: `total`, `logs["loss"]`, `self.losses`
    value: cst.BaseExpression  # what is added or stored
    function: Optional[cst.FunctionDef]
    cls: Optional[cst.ClassDef]
    loops: tuple[tuple[cst.CSTNode, int], ...]  # enclosing loops of the function, with their start order
    frames: tuple[Frame, ...]
    order: int


class LossHistoryAccumulation(Checker):
    code = "SF103"
    tokens = ("+=", ".append(", ".extend(", ".insert(", " + ")
    also_needs = (("loss", "criterion", ".eval()", "backward"),)
    needs = ("history", "steps", "uses")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.enclosing = self.model.enclosing
        self.sites: list[_Site] = []
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
        self.sites.append(_Site(node, holder, value, function, cls, tuple(self._loops[-1]),
                                self.model.steps.frames(), self.names.position))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:  # `losses += (l,)` concatenates: not a sum
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and not isinstance(node.value, (cst.Tuple, cst.List)):
            self._record(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        for holder, value in _unpacked_targets(node):  # `total = total + loss`, `total, n = total + loss, n + 1`
            if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
                continue
            target = code_for(holder)
            if code_for(value.left) == target:
                self._record(node, holder, value.right)
            elif code_for(value.right) == target:
                self._record(node, holder, value.left)

    def leave_Assign(self, original_node: cst.Assign) -> None:  # resets: `self.loss = 0` at each iteration's top
        spelled = [dotted_name(holder) for holder, _ in _unpacked_targets(original_node)]
        function = self.enclosing.innermost_function()
        for name in spelled:
            if name:
                self._resets.setdefault((name, id(function)), []).append(self.names.position)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _APPENDS:
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            index = _APPENDS[func.attr.value]
            if len(positional) == index + 1:
                self._record(node, func.value, positional[index])

    # -- decision --------------------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        if any(f"{kind} {lib}" in self.context.text for kind in ("import", "from") for lib in ("tensorflow", "jax", "mxnet")):
            return  # another framework's autograd: no graph is recorded by default
        history = self.model.history
        for site in self.sites:
            path = self.model.steps.step_path(site.frames) if site.function is not None else None
            if path is not None and isinstance(path.scope, FunctionFrame) and path.scope.node is site.function:
                history.mark_returned(site.function)  # the framework backpropagates what a step returns
        for site in self.sites:
            holder = _holder_spelling(site.holder)
            if holder is None or in_harness(site.function, site.cls) or not self._outlives_iteration(site, holder):
                continue  # a test that asserts sums a few values to compare them: no run grows
            origin = history.origin(site.value)
            if origin is None or history.read_under_no_grad(site.value):
                continue
            if origin != LOSS and not self._trains_or_evaluates(site):
                continue  # outputs collected inside a forward (tiles, chunks, layers), not a training log
            on_self = holder.startswith("self.")
            if history.feeds_backward({holder}, site.function, site.cls if on_self else None):
                continue  # gradient accumulation: the graph is kept on purpose
            if on_self and history.feeds_return({holder}, None, site.cls):
                continue  # a method hands the stored graphs to a caller (pipeline schedules, chunked losses)
            if not on_self and history.feeds_return({holder}, site.function) and not self._keeps_a_record(site):
                continue  # the caller decides (a loss summed from its parts, outputs assembled by a forward)
            if self.model.uses.reset_every_step(site.holder, site.node, site.function):
                continue  # an accumulation window: the sum starts over at every optimizer step
            self.report(site.node, self._message(site, holder, origin), self._fix(site, holder, origin))

    def _outlives_iteration(self, site: _Site, holder: str) -> bool:
        """The holder keeps its value from one iteration (or step call) to the next."""
        root = holder.split(".", 1)[0].split("[", 1)[0]
        if root == "self" or root not in self._scope(site).bindings:
            start = site.loops[-1][1] if site.loops else 0
            if any(start <= o < site.order for o in self._resets.get((holder, id(site.function)), ())):
                return False  # reset earlier in the same iteration or call
            return bool(site.loops) or self.model.steps.step_path(site.frames) is not None
        start, bindings = (site.loops[-1][1] if site.loops else 0), self._scope(site).bindings.get(root, [])
        fresh = [b for b in bindings if b.kind in ("assign", "for", "unpack", "with") and start < b.order <= site.order
                 and b.node is not site.node and not b.conditional]
        return bool(site.loops) and any(b.order <= start for b in bindings) and not fresh

    def _keeps_a_record(self, site: _Site) -> bool:
        """The function differentiates what it sums itself, whenever it sums it (a training loop: what it
        returns is a log of losses whose graphs its backward passes used), or evaluates (puts a model in
        eval mode): no caller is left to differentiate the sum. A backward of something else (the inner
        `autograd.grad` of a meta-learning loss), or one only on some calls (`if with_backward:`), leaves
        the returned sum to the caller."""
        history, uses = self.model.history, self.model.uses
        if history.switches_to_eval(site.function):
            return True
        spelled = dotted_name(site.value)
        backwards = (history.backwards_of({spelled}, site.function) if spelled is not None
                     else self.model.events.in_function(site.function, "backward"))
        return any(uses.runs_whenever(backward.node, site.node) for backward in backwards)

    def _scope(self, site: _Site):
        return self.names.scopes[site.function or self.names.module_scope.node]

    def _trains_or_evaluates(self, site: _Site) -> bool:
        return self.model.history.trains_or_evaluates(site.function, site.loops[-1][0] if site.loops else None)

    # -- message and fix -------------------------------------------------------------------------------
    def _message(self, site: _Site, holder: str, origin: str) -> str:
        value = _short(code_for(site.value))
        statement = _short(code_for(site.node))
        where = "every iteration" if site.loops else "every step"
        return (
            f"`{statement}` keeps the autograd graph of {where} alive through `{holder}` (`{value}` is {origin} "
            f"that still carries its history), so memory grows; store `{self._suggested(site.value)}`"
        )

    def _fix(self, site: _Site, holder: str, origin: str) -> Fix:
        new = self._detached(site.value)
        on_self = holder.startswith("self.")
        reads = self.model.uses.reads(site.holder, site.node, site.order, site.function, site.cls if on_self else None)
        need, stored = strongest(reads), f"store `{self._suggested(site.value)}` instead"
        if need in (NUMBER, TENSOR):
            return Fix("safe", stored, {site.value: new})
        why = ("later code shows its autograd state (its printed text names the `grad_fn`)" if need == GRAPH
               else "it reaches code this file does not show, which might differentiate it")
        return Fix("unsafe", f"{stored} (`{holder}`: {why})", {site.value: new})


    def _suggested(self, value: cst.BaseExpression) -> str:
        """What the fix stores, for a message: `loss.detach()`, `(a / b).detach()`, `(loss.detach(), acc)`."""
        if isinstance(value, (cst.Tuple, cst.List, cst.ListComp, cst.GeneratorExp)):
            return _short(code_for(self._detached(value)))
        text = _short(code_for(value))
        return f"{text}.detach()" if _atomic(value) else f"({text}).detach()"

    def _detached(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value.detach()`; for a tuple or list display (`(loss, acc)`) or a comprehension (`[p.float() for p
        in parts]`), the same container with each part that carries a graph detached: a list has no `.detach()`."""
        if isinstance(value, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            history = self.model.history
            return value.with_changes(elements=[
                e.with_changes(value=self._detached(e.value)) if history.origin(e.value) else e for e in value.elements
            ])
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            return value.with_changes(elt=self._detached(value.elt))
        if not _atomic(value):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach")))


def _atomic(value: cst.BaseExpression) -> bool:
    """A method call on it needs no parentheses (`loss.item()`, not `(a / b).item()`)."""
    return isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(value.lpar)


def _holder_spelling(holder: cst.BaseExpression) -> Optional[str]:
    return dotted_name(holder.value if isinstance(holder, cst.Subscript) else holder)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _unpacked_targets(node: cst.Assign) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Each target of an assignment with the value it receives: the whole value for a plain target, each
    element of a displayed tuple for a tuple target (`total, n = total + loss, n + 1`)."""
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    for target in node.targets:
        if not isinstance(target.target, (cst.Tuple, cst.List)):
            pairs.append((target.target, node.value))
            continue
        shown = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) else ()
        if len(shown) != len(target.target.elements):
            continue
        for position, element in enumerate(target.target.elements):
            value = torch_ops.unpacked(node.value, (position,))
            if value is not None and not isinstance(element, cst.StarredElement):
                pairs.append((element.value, value))
    return pairs
