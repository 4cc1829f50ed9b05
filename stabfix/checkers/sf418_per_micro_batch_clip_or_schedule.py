"""SF418 per-micro-batch-clip-or-schedule: under gradient accumulation, gradients are clipped or the
learning-rate schedule advanced on every micro-batch while the optimizer steps once per N of them.

A query over the `accumulation` part (backward every iteration, optimizer step behind `% N`) and the
`events` of one pass of that loop: a clip (`clip_grad_norm_`/`clip_grad_value_`, torch's or a wrapper's)
or an LR scheduler's `step()` (`schedulers`: built from `torch.optim.lr_scheduler`, a schedule factory,
or handed the optimizer, returned by a helper whose summary says so, or passed for a parameter by the
file's calls; never decided by a name) that runs under no condition the backward does not also run under. Inside
`with accelerator.accumulate(model):` a clip with no `if accelerator.sync_gradients:` around it is the
same mistake (the library prepares schedulers to skip non-sync passes itself, so those stay silent).
Fix (unsafe): move the line into the step gate: a clip right before the optimizer step, a scheduler
step at the end of the gate.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.statements import move_before
from stabfix.fixes.syntax import code_for, starts_statement
from stabfix.model.calls.events import clip_measures_only, Backward, Event, Step
from stabfix.model.calls.schedulers import is_lr_scheduler
from stabfix.model.training.accumulation import Accumulation

_MAX_TEXT = 60


class PerMicroBatchClipOrSchedule(Checker):
    code = "SF418"
    tokens = ("clip_grad", "step(")
    also_needs = (("backward",), ("%", "accumulate("))
    tokens_elsewhere = ("clip_grad", "step(", "backward")  # a helper of another module may run the rest (`events_through_calls`)
    needs = ("names", "optimizers", "events", "accumulation", "summaries", "events_through_calls")

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: set[int] = set()
        seen_loops: set[int] = set()
        for found in self.model.accumulation.gated_loops():
            if id(found.loop) in seen_loops or self._every_one(found.every):  # type: ignore[arg-type]
                continue
            seen_loops.add(id(found.loop))  # `loops()` leaves out loops cleared on every pass: nothing accumulates
            for event in self.model.events_through_calls.iteration(found.loop, "clip", "step"):
                if id(event.node) in reported or not self._every_pass(event, found.backward):
                    continue
                what = self._what(event)
                if what is None:
                    continue
                reported.add(id(event.node))
                self.report(event.node, _message(event, what, found), self._fix(event, what, found))
        self._library_accumulation(reported)

    def _library_accumulation(self, reported: set[int]) -> None:
        """`with accelerator.accumulate(model):` and a clip every pass, not only when gradients sync."""
        if not self.model.accumulation.manages_any():
            return  # no `accumulate()` block: no clip is library-managed (and the events are not asked)
        events = self.model.events_through_calls
        for clip in events.of_kind("clip"):
            if id(clip.node) in reported or clip.site.in_lambda or not self.model.accumulation.library_managed(clip.site):
                continue
            backwards = [b for b in events.in_function(clip.site.function, "backward")
                         if self.model.accumulation.library_managed(b.site) and b.site.blocks[-1] is clip.site.blocks[-1]]
            if backwards and self._every_pass(clip, backwards[0]):  # type: ignore[arg-type]
                reported.add(id(clip.node))
                self.report(clip.node, (
                    f"`{_text(clip.node)}` runs on every pass of `accumulate()`, also the ones whose gradients are "
                    "only partial sums that the optimizer does not step on (and, under DDP, not yet synced), so "
                    "they are clipped before they are complete; clip under `if accelerator.sync_gradients:`"))

    def _every_one(self, every: cst.BaseExpression) -> bool:
        """`% 1` (directly or through a name bound once to 1): a step on every pass, no accumulation."""
        value = self.model.names.single_value(every) if type(every) is cst.Name else every
        return type(value) is cst.Integer and value.evaluated_value == 1

    def _every_pass(self, event: Event, backward: Backward) -> bool:
        """The event runs whenever the backward does: no condition of its own around it."""
        if event.site.in_lambda or event.site.function is not backward.site.function:
            return False
        return set(event.site.branches) <= set(backward.site.branches)

    def _what(self, event: Event) -> Optional[str]:
        if event.kind == "clip":
            return None if clip_measures_only(event.node) else "clip"
        assert isinstance(event, Step)
        call = event.node
        if len(event.candidates) != 1 or type(call) is not cst.Call:
            return None
        if is_lr_scheduler(event.candidates[0], self.model.names, self.model.optimizers, self.model.summaries):
            return "schedule"
        return None

    def _fix(self, event: Event, what: str, found: Accumulation) -> Optional[Fix]:
        if self.model.events_through_calls.via(event) or self.model.accumulation.spliced(found.step) is not None:
            return None  # a helper's clip, schedule or step: moving its call, or next to it, moves all else it does
        line, step_line = event.site.statement, found.step.site.statement
        if line is None or step_line is None or len(line.body) != 1 or type(line.body[0]) is not cst.Expr:
            return None  # `norm = clip_grad_norm_(...)` is read later on every pass: the author decides
        if not starts_statement(line, event.node) or found.gate is None:  # type: ignore[arg-type]
            return None
        if any(e.kind == "unscale" for e in self.model.events_through_calls.iteration(found.loop, "unscale")):
            return None  # an unscale per micro-batch is its own problem; the clip must follow it
        if what == "clip":
            changes = move_before(line, step_line)
            return Fix("unsafe", "clip only before the optimizer step, under its gate", changes) if changes else None
        body = found.gate.body
        last = body.body[-1] if type(body) is cst.IndentedBlock and body.body else None
        if type(last) is not cst.SimpleStatementLine or last is line:
            return None
        return Fix("unsafe", "advance the schedule only after an optimizer step, under its gate", {
            line: cst.RemovalSentinel.REMOVE,
            last: cst.FlattenSentinel([last, line.with_changes(leading_lines=())]),
        })



def _message(event: Event, what: str, found: Accumulation) -> str:
    every, text, step = _text(found.every), _text(event.node), _text(found.step.node)
    if what == "clip":
        return (
            f"`{text}` runs on every micro-batch while `{step}` runs once per `{every}` of them, so the gradient "
            f"is clipped while it is still a partial sum (each micro-batch's share cut on its own, the sum never "
            f"bounded); clip once, right before the step, under its `% {every}` gate"
        )
    return (
        f"`{text}` advances the learning-rate schedule on every micro-batch while `{step}` runs once per "
        f"`{every}` of them, so the schedule (warm-up, decay) runs `{every}`× too fast; step the scheduler "
        f"after the optimizer, under its `% {every}` gate"
    )


def _text(node: Optional[cst.CSTNode]) -> str:
    code = " ".join(code_for(node).split()) if node is not None else "?"
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
