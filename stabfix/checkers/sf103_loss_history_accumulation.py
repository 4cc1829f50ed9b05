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

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for
from stabfix.model.flow.history import LOSS
from stabfix.model.flow.later_uses import GRAPH, NUMBER, TENSOR, strongest
from stabfix.model.source.imports import dotted_name
from stabfix.model.training.modes import in_harness
from stabfix.model.training.running_totals import Accumulation
from stabfix.model.training.step_frames import FunctionFrame
from stabfix.shape import Shape


class LossHistoryAccumulation(Checker):
    code = "SF103"
    tokens = ("+=", ".append(", ".extend(", ".insert(", " + ")
    also_needs = (("loss", "criterion", ".eval()", "backward"),)
    needs = ("history", "steps", "uses", "running_totals")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on an update (`h += v`, `h = h + v`, `h.append(v)`, `.extend`, `.insert`) of a holder spelled as a
        # name, attribute or subscript, by a value that may carry a graph (no literal, comparison, `.item()`...)
        for node in shape.nodes(ast.AugAssign):
            if type(node.op) in (ast.Add, ast.Sub) and type(node.value) not in (ast.Tuple, ast.List) \
                    and _spelled(node.target) and _may_carry_graph(node.value):
                return True
        for node in shape.nodes(ast.Assign):
            if len(node.targets) == 1 and _sums_into_itself(node.targets[0], node.value):
                return True
        for method, index in (("append", 0), ("extend", 0), ("insert", 1)):
            for call in shape.calls(method):
                positional = [arg for arg in call.args if type(arg) is not ast.Starred]
                if type(call.func) is ast.Attribute and _spelled(call.func.value) and len(positional) == index + 1 \
                        and _may_carry_graph(positional[index]):
                    return True
        return False

    # -- decision --------------------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        if any(f"{kind} {lib}" in self.context.text for kind in ("import", "from") for lib in ("tensorflow", "jax", "mxnet")):
            return  # another framework's autograd: no graph is recorded by default
        history = self.model.history
        totals = self.model.running_totals
        for site in totals.sites:
            path = self.model.steps.step_path(site.frames) if site.function is not None else None
            if path is not None and isinstance(path.scope, FunctionFrame) and path.scope.node is site.function:
                history.mark_returned(site.function)  # the framework backpropagates what a step returns
        for site in totals.sites:
            holder = _holder_spelling(site.holder)
            if holder is None or in_harness(site.function, site.cls) or not totals.outlives_iteration(site, holder):
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

    def _keeps_a_record(self, site: Accumulation) -> bool:
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

    def _trains_or_evaluates(self, site: Accumulation) -> bool:
        return self.model.history.trains_or_evaluates(site.function, site.loops[-1][0] if site.loops else None)

    # -- message and fix -------------------------------------------------------------------------------
    def _message(self, site: Accumulation, holder: str, origin: str) -> str:
        value = _short(code_for(site.value))
        statement = _short(code_for(site.node))
        where = "every iteration" if site.loops else "every step"
        return (
            f"`{statement}` keeps the autograd graph of {where} alive through `{holder}` (`{value}` is {origin} "
            f"that still carries its history), so memory grows; store `{self._suggested(site.value, value)}`"
        )

    def _fix(self, site: Accumulation, holder: str, origin: str) -> Fix:
        new = self._detached(site.value)
        on_self = holder.startswith("self.")
        reads = self.model.uses.reads(site.holder, site.node, site.order, site.function, site.cls if on_self else None)
        need, stored = strongest(reads), f"store `{self._suggested(site.value)}` instead"
        if need in (NUMBER, TENSOR):
            return Fix("safe", stored, {site.value: new})
        why = ("later code shows its autograd state (its printed text names the `grad_fn`)" if need == GRAPH
               else "it reaches code this file does not show, which might differentiate it")
        return Fix("unsafe", f"{stored} (`{holder}`: {why})", {site.value: new})


    def _suggested(self, value: cst.BaseExpression, shown: Optional[str] = None) -> str:
        """What the fix stores, for a message: `loss.detach()`, `(a / b).detach()`, `(loss.detach(), acc)`.
        `shown`: `value`'s text as `_short` gives it, when the caller has it already."""
        if type(value) in (cst.Tuple, cst.List, cst.ListComp, cst.GeneratorExp):
            return _short(code_for(self._detached(value)))
        text = shown if shown is not None else _short(code_for(value))
        return f"{text}.detach()" if _atomic(value) else f"({text}).detach()"

    def _detached(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value.detach()`; for a tuple or list display (`(loss, acc)`) or a comprehension (`[p.float() for p
        in parts]`), the same container with each part that carries a graph detached: a list has no `.detach()`."""
        if type(value) in (cst.Tuple, cst.List) and not any(type(e) is cst.StarredElement for e in value.elements):
            history = self.model.history
            return value.with_changes(elements=[
                e.with_changes(value=self._detached(e.value)) if history.origin(e.value) else e for e in value.elements
            ])
        if type(value) in (cst.ListComp, cst.GeneratorExp):
            return value.with_changes(elt=self._detached(value.elt))
        if not _atomic(value):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach")))


def _atomic(value: cst.BaseExpression) -> bool:
    """A method call on it needs no parentheses (`loss.item()`, not `(a / b).item()`)."""
    return type(value) in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) or bool(value.lpar)


def _holder_spelling(holder: cst.BaseExpression) -> Optional[str]:
    return dotted_name(holder.value if type(holder) is cst.Subscript else holder)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


_NO_GRAPH = (ast.Constant, ast.Compare, ast.Dict, ast.Set, ast.DictComp, ast.SetComp, ast.Lambda, ast.JoinedStr, ast.BoolOp)
_CUT_METHODS = frozenset({"item", "tolist", "numpy", "detach"})


def _may_carry_graph(value: ast.expr) -> bool:
    if isinstance(value, _NO_GRAPH):
        return False
    return not (type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _CUT_METHODS)


def _spelled(holder: ast.expr) -> bool:
    """A name, a chain of attributes of one, or a subscript of either (what `_holder_spelling` spells)."""
    if type(holder) is ast.Subscript:
        holder = holder.value
    while type(holder) is ast.Attribute:
        holder = holder.value
    return type(holder) is ast.Name


def _sums_into_itself(target: ast.expr, value: ast.expr) -> bool:
    """`total = total + loss`, `total, n = total + loss, n + 1` (the target spelled again on one side)."""
    if type(target) in (ast.Tuple, ast.List):
        if type(value) not in (ast.Tuple, ast.List) or len(value.elts) != len(target.elts):
            return False
        return any(_sums_into_itself(t, v) for t, v in zip(target.elts, value.elts))
    if type(value) is not ast.BinOp or type(value.op) is not ast.Add:
        return False
    spelled = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
    for side, other in ((value.left, value.right), (value.right, value.left)):
        if ast.dump(side, annotate_fields=False) == spelled and _may_carry_graph(other):
            return True
    return False
