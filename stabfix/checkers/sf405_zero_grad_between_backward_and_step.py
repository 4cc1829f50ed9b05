"""SF405 zero-grad-between-backward-and-step: the stepped optimizer's gradients are cleared after
backward and before the step, so the step sees no gradient.

A query over `events` within one function: a backward pass, then a `zero_grad()` of the optimizer
that a later step steps (the same expression or the same construction, or a model it was built from:
`model.zero_grad()` with `AdamW(model.parameters())`), then that step, with no other backward, gradient
write or step of it in between, all three able to run in one pass (not exclusive branches; the clear's
block does not `continue`/`return` first). A clear of another optimizer built over the same model or a
part of it (`opt_all = SGD(model.parameters())` cleared before `opt_head = Adam(model.head.parameters())`
steps) counts; one over other models (GAN: D's between G's backward and step) or of a model the file
does not tie to the optimizer stays silent, unless the optimizer's tensors are not shown (a parameter)
and the backward's loss comes from the cleared model alone (`backward_reach`): then the clear empties
every gradient that backward made, whatever the optimizer steps.
Fix (unsafe): move the clear to right after the step, when both sit in the same block.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.statements import insert_after
from stabfix.fixes.syntax import code_for, starts_statement
from stabfix.model.calls.events import ClearGrad, Event, GradWrite, Step, stepped_optimizer
from stabfix.model.calls.optimizers import OptimizerInfo
from stabfix.model.flow.grad_coverage import backward_reach
from stabfix.model.flow.parameters import instance_receivers, models_in, shares_parameters
from stabfix.model.source.imports import dotted_name


class ZeroGradBetweenBackwardAndStep(Checker):
    code = "SF405"
    tokens = ("zero_grad",)
    also_needs = (("backward",), ("step",))
    tokens_elsewhere = ("zero_grad", "backward", ".step(")  # a helper of another module may run the rest (`events_through_calls`)
    needs = ("optimizers", "events", "names", "events_through_calls")

    def leave_Module(self, original_node: cst.Module) -> None:
        events = self.model.events_through_calls  # a clear, backward or step in a helper counts at its call
        for step in events.of_kind("step"):
            assert isinstance(step, Step)
            stepped = stepped_optimizer(step, self.model.optimizers, self.model.events)
            if stepped is None or step.site.in_lambda:
                continue
            here = [e for e in events.in_function(step.site.function) if not e.site.in_lambda]
            clear = self._clear_before(step, here, *stepped)
            if clear is not None:
                self.report(clear.node, _message(clear, step), self._fix(clear, step))

    def _clear_before(
        self, step: Step, here: list[Event], expression: cst.BaseExpression, info: OptimizerInfo
    ) -> ClearGrad | None:
        """The clear of this optimizer's gradients that runs after a backward and before `step`."""
        events = self.model.events_through_calls
        for clear in reversed([e for e in here if e.site.order < step.site.order]):
            if not isinstance(clear, ClearGrad) or clear.how != "zero_grad":
                continue
            same = self._same_gradients(clear, expression, info)
            if not same and not self._may_cover_backward(clear, info):
                continue
            if clear.site.never_both_run(step.site) or clear.site.leaves_before(step.site):
                continue
            between = [e for e in here if clear.site.order < e.site.order < step.site.order]
            if any(events.accumulates(e) or isinstance(e, GradWrite) for e in between):
                return None  # gradients recomputed or written by hand after the clear
            if any(isinstance(e, Step) and self._steps(e, expression, info) for e in between):
                return None
            for backward in reversed([e for e in here if e.site.order < clear.site.order]):
                if isinstance(backward, Step) and self._steps(backward, expression, info):
                    break  # that backward's gradients were already used by an earlier step
                if not events.accumulates(backward):
                    continue
                if backward.site.never_both_run(clear.site) or backward.site.leaves_before(clear.site):
                    continue
                if not same and not self._clears_all_of(clear, backward):
                    return None
                if events.one_call(backward, clear, step):
                    return None  # all three in one helper: reported in its own body
                return clear
        return None

    def _steps(self, other: Step, expression: cst.BaseExpression, info: OptimizerInfo) -> bool:
        found = stepped_optimizer(other, self.model.optimizers, self.model.events)
        return found is not None and self._same_optimizer(found[0], found[1], expression, info)

    def _same_optimizer(self, a: cst.BaseExpression, a_info: OptimizerInfo, b: cst.BaseExpression, b_info: OptimizerInfo) -> bool:
        if a_info.constructor is not None and b_info.constructor is not None:
            return a_info.constructor is b_info.constructor
        return dotted_name(a) is not None and dotted_name(a) == dotted_name(b)

    def _same_gradients(self, clear: ClearGrad, expression: cst.BaseExpression, info: OptimizerInfo) -> bool:
        """Whether `clear` empties the gradients the stepped optimizer would use."""
        cleared = self.model.optimizers.resolve(clear.receiver, clear.site.scope)
        if cleared is not None:
            if self._same_optimizer(clear.receiver, cleared, expression, info):
                return True
            # another optimizer built over the same model, or a part of it (`opt_all` and `opt_head`)
            if cleared.constructor is None or info.constructor is None:
                return False
            return shares_parameters(models_in(info.constructor) - {""}, frozenset(models_in(cleared.constructor)),
                                     instance_receivers(self.model.names, info.constructor, cleared.constructor))
        receiver = dotted_name(clear.receiver)
        if receiver is None or info.constructor is None:
            return False
        return shares_parameters(models_in(info.constructor), frozenset({receiver}),
                                 instance_receivers(self.model.names, info.constructor, clear.receiver))

    def _may_cover_backward(self, clear: ClearGrad, info: OptimizerInfo) -> bool:
        """An optimizer the file does not show the tensors of (a parameter), and a model's own clear."""
        return info.constructor is None and self.model.optimizers.resolve(clear.receiver, clear.site.scope) is None

    def _clears_all_of(self, clear: ClearGrad, backward: Event) -> bool:
        """The clear empties every gradient the backward made: the loss comes from that model alone
        (`loss = model(x).sum(); loss.backward(); model.zero_grad()`), so whatever the optimizer
        steps, it sees none of that backward's gradients."""
        loss = getattr(backward, "loss", None)
        receiver = dotted_name(clear.receiver)
        if loss is None or receiver is None:
            return False
        reach = backward_reach(loss, self.model.names, self.model.names.qualify)
        return bool(reach) and reach <= {receiver}  # type: ignore[operator]

    def _fix(self, clear: ClearGrad, step: Step) -> Fix | None:
        if self.model.events_through_calls.via(clear) or self.model.events_through_calls.via(step):
            return None  # a helper's clear or step: moving its call would move all else it does
        clear_line, step_line = clear.site.statement, step.site.statement
        if clear_line is None or step_line is None or len(clear_line.body) != 1:
            return None
        if not starts_statement(clear_line, clear.node) or not starts_statement(step_line, step.node):  # type: ignore[arg-type]
            return None
        if clear.site.blocks[-1] is not step.site.blocks[-1]:
            return None
        changes = dict(insert_after(step_line, code_for(clear_line.body[0]).strip()))
        changes[clear_line] = cst.RemovalSentinel.REMOVE
        return Fix("unsafe", "clear the gradients after the step instead of before it", changes)


def _message(clear: ClearGrad, step: Step) -> str:
    return (
        f"`{code_for(clear.node)}` clears the gradients after the backward pass and before `{code_for(step.node)}`, "
        "so the step sees no gradient (the update is skipped or only weight decay applies); "
        "move the clear to after the step or before the backward pass"
    )
