"""SF406 clip-after-step: gradients are clipped after the optimizer step that used them.

A query over `events` within one function: a clip (`clip_grad_norm_`/`clip_grad_value_`, torch's or a
wrapper's method) that comes after an optimizer step with no backward pass in between (the gradients it
clips are the ones the step already applied; a backward in between means the clip prepares the next
step; so does a call whose function runs one, by its `summaries` effect), and that precedes no later
step of the same pass (GAN: D's step, G's clip, G's step; also a call whose function steps). A clip
with `max_norm=inf` only measures the norm and stays silent.
Fix (unsafe): move the clip line to right before the step when both sit in the same block (with
`scaler.unscale_(opt)` ahead of it when the step goes through a `GradScaler` that was not unscaled).
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.statements import move_before
from stabfix.fixes.syntax import code_for, starts_statement
from stabfix.model.calls.events import clip_measures_only, Clip, Event, LocalCall, Step, stepped_optimizer
from stabfix.model.source.node_fields import visit_readonly


class ClipAfterStep(Checker):
    code = "SF406"
    tokens = ("clip_grad",)
    also_needs = (("step",),)
    tokens_elsewhere = ("clip_grad", ".step(")  # a helper of another module may run the rest (`events_through_calls`)
    needs = ("names", "optimizers", "events", "summaries", "events_through_calls")

    def leave_Module(self, original_node: cst.Module) -> None:
        events = self.model.events_through_calls  # a clip or a step in a helper counts at its call
        for clip in events.of_kind("clip"):
            assert isinstance(clip, Clip)
            if clip.site.in_lambda or clip_measures_only(clip.node):
                continue
            here = [e for e in events.in_function(clip.site.function) if not e.site.in_lambda]
            step = self._step_before(clip, here)
            if step is None or self._step_after(clip, here) or events.one_call(step, clip):
                continue  # (a step and a clip of one helper: reported in its own body)
            stepped = stepped_optimizer(step, self.model.optimizers, self.model.events)
            assert stepped is not None
            self.report(clip.node, _message(clip, step), self._fix(clip, step, here, stepped[0]))

    def _step_before(self, clip: Clip, here: list[Event]) -> Step | None:
        events = self.model.events_through_calls
        for event in reversed([e for e in here if e.site.order < clip.site.order]):
            if events.accumulates(event) or self._through_summary(event, "backward"):
                return None  # the clip acts on fresh gradients, for the next step
            if not isinstance(event, Step) or stepped_optimizer(event, self.model.optimizers, self.model.events) is None:
                continue
            if event.site.never_both_run(clip.site) or event.site.leaves_before(clip.site):
                continue
            return event
        return None

    def _through_summary(self, event: Event, kind: str) -> bool:
        """A call whose function (of this file or another) runs a backward pass or a step (its effect)."""
        if not isinstance(event, LocalCall) or type(event.node) is not cst.Call:
            return False
        return any(effect.kind == kind for effect in self.model.summaries.effects_at(event.node))

    def _step_after(self, clip: Clip, here: list[Event]) -> bool:
        """A later optimizer step of the same pass uses the clipped gradients."""
        for event in here:
            if event.site.order <= clip.site.order:
                continue
            if not isinstance(event, Step):
                if not self._through_summary(event, "step"):
                    continue  # a call whose function steps an optimizer (`step_generator(opt_g)`) counts
            elif stepped_optimizer(event, self.model.optimizers, self.model.events) is None:
                continue
            if not clip.site.never_both_run(event.site) and not clip.site.leaves_before(event.site):
                return True
        return False

    def _fix(self, clip: Clip, step: Step, here: list[Event], optimizer: cst.BaseExpression) -> Fix | None:
        if self.model.events_through_calls.via(clip) or self.model.events_through_calls.via(step):
            return None  # a helper's clip or step: moving its call would move all else it does
        clip_line, step_line = clip.site.statement, step.site.statement
        if clip_line is None or step_line is None or len(clip_line.body) != 1:
            return None
        if not starts_statement(clip_line, clip.node) or not starts_statement(step_line, step.node):  # type: ignore[arg-type]
            return None
        if clip.site.blocks[-1] is not step.site.blocks[-1]:
            return None
        if self._rebound_between(clip, step):
            return None
        extra: list[str] = []
        scaler = step.candidates[0] if len(step.candidates) > 1 else None
        if scaler is not None and self.model.events.is_scaler(scaler):
            if not any(e.kind == "unscale" and e.site.order < step.site.order for e in here):
                extra.append(f"{code_for(scaler)}.unscale_({code_for(optimizer)})")
        changes = move_before(clip_line, step_line, *extra)
        if changes is None:
            return None
        return Fix("unsafe", "clip the gradients before the step", changes)

    def _rebound_between(self, clip: Clip, step: Step) -> bool:
        """A name the clip reads is (re)bound between the step and the clip: moving it would read another value."""
        names = self.model.names
        read = {node.value for node in _names(clip.node)}
        return names.bound_between(read, step.site.names_order, clip.site.names_order)


def _names(node: cst.CSTNode) -> list[cst.Name]:
    collector = _NameCollector()
    visit_readonly(node, collector)
    return collector.found


class _NameCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Name] = []

    def visit_Name(self, name: cst.Name) -> None:
        self.found.append(name)



def _message(clip: Clip, step: Step) -> str:
    text = code_for(clip.node)
    if len(text) > 70:
        text = text[:67] + "..."
    return (
        f"`{text}` clips the gradients after `{code_for(step.node)}` already applied them, so the update is "
        "never clipped (and the next step may add to the clipped leftovers); move the clip to right before the step"
    )
