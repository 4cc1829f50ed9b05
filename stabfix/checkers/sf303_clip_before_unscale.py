"""SF303 clip-before-unscale: gradients clipped while a `GradScaler` still has them multiplied by the scale.

A query over `events`: torch's `clip_grad_norm_`/`clip_grad_value_` (not a wrapper's method: Accelerate,
Fabric, DeepSpeed unscale first) followed in the same pass by a step through a gradient scaler
(`scaler.step(opt)`, `events.is_scaler`), with no `scaler.unscale_(...)` (nor a call of a function whose `summaries` effect unscales) that can
run before the clip since the previous step. The clip may sit in a helper that the step's function calls before the step.
Fix (unsafe): insert `scaler.unscale_(opt)` right before the clip (once per step); none when the function
unscales elsewhere (a logging branch that unscales and skips the update would make the inserted call the
second `unscale_` since the last `update()`, which raises: measured by tests/test_fix_differential.py).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.statements import insert_before
from stabfix.fixes.syntax import code_for, starts_statement
from stabfix.model.calls.events import Clip, Event, LocalCall, Site, Step, stepped_optimizer


class ClipBeforeUnscale(Checker):
    code = "SF303"
    tokens = ("clip_grad",)
    tokens_elsewhere = ("clip_grad", ".step(", "scaler")  # a helper of another module may run the rest (`events_through_calls`)
    also_needs = (("scale",),)
    needs = ("optimizers", "events", "summaries", "events_through_calls")

    def leave_Module(self, original_node: cst.Module) -> None:
        events = self.model.events_through_calls
        fixed_steps: set[int] = set()
        judged_calls: set[int] = set()  # calls whose function's own clip was reported through them
        # a function's own clips first: a helper of this file is reported at its clip, through its callers
        for clip in sorted(events.of_kind("clip"), key=lambda event: bool(events.via(event))):
            assert isinstance(clip, Clip)
            if clip.site.in_lambda or not self._torch_clip(clip) or id(clip.node) in judged_calls:
                continue
            found = self._scaled_step_after(clip.site, clip)
            caller: Optional[LocalCall] = None
            if found is None and not events.in_function(clip.site.function, "step"):
                for call in self._callers(clip):
                    found = self._scaled_step_after(call.site, clip)
                    if found is not None:
                        caller = call
                        judged_calls.add(id(call.node))
                        break
            if found is None or events.one_call(clip, found[0]):
                continue  # (a clip and a step of one helper: reported in its own body)
            step, optimizer = found
            scaler = code_for(step.candidates[0])
            fix = None
            if caller is None and id(step) not in fixed_steps:
                fix = self._fix(clip, scaler, optimizer)
                if fix is not None:
                    fixed_steps.add(id(step))
            self.report(clip.node, _message(clip, scaler, optimizer, caller), fix)

    def _torch_clip(self, clip: Clip) -> bool:
        spliced = self.model.events_through_calls.effect_of(clip)
        if spliced is not None:  # a helper's clip: its summary says whether it is torch's own
            return spliced.detail == "torch"
        func = clip.node.func if type(clip.node) is cst.Call else None
        return func is not None and (self.qualified_name(func) or "").startswith("torch.nn.utils.")

    def _scaled_step_after(self, site: Site, clip: Clip) -> Optional[tuple[Step, str]]:
        """The scaler step that follows `site` in its function, when no unscale runs before the clip."""
        events = self.model.events_through_calls
        here = [e for e in events.in_function(site.function) if not e.site.in_lambda]
        for step in (e for e in here if isinstance(e, Step) and e.site.order > site.order):
            if len(step.candidates) < 2 or not events.is_scaler(step.candidates[0]):
                continue
            if step.site.never_both_run(site) or site.leaves_before(step.site):
                continue
            stepped = stepped_optimizer(step, self.model.optimizers, self.model.events_through_calls)
            optimizer = code_for(stepped[0] if stepped is not None else step.candidates[1])
            if self._unscaled_before(here, site, step) or self._unscaled_before(
                events.in_function(clip.site.function), clip.site, step
            ):
                return None
            return step, optimizer
        return None

    def _unscaled_before(self, here: list[Event], site: Site, step: Step) -> bool:
        """An `unscale_` that can run before `site` in the same pass as `step` (after any earlier step)."""
        for event in reversed([e for e in here if e.site.order < site.order]):
            if isinstance(event, Step) and event.candidates[:1] and code_for(event.candidates[0]) == code_for(step.candidates[0]):
                return False  # an earlier step of this scaler: its unscale was for that step
            unscales = event.kind == "unscale" or (  # or a call whose function unscales (`summaries`)
                isinstance(event, LocalCall) and type(event.node) is cst.Call
                and any(effect.kind == "unscale" for effect in self.model.summaries.effects_at(event.node)))
            if unscales and not event.site.never_both_run(site) and not event.site.leaves_before(site):
                return True
        return False

    def _callers(self, clip: Clip) -> list[LocalCall]:
        function = clip.site.function
        if function is None:
            return []
        is_method = clip.site.cls is not None and len(clip.site.functions) == 1
        return [c for c in self.model.events_through_calls.calls_of(function.name.value) if c.on_self == is_method]

    def _fix(self, clip: Clip, scaler: str, optimizer: str) -> Fix | None:
        if self.model.events_through_calls.via(clip):
            return None  # a helper's clip: whether it unscales on some path is the helper's business
        line = clip.site.statement
        if line is None or not starts_statement(line, clip.node):  # type: ignore[arg-type]
            return None
        if any(event.kind == "unscale" for event in self.model.events_through_calls.in_function(clip.site.function)):
            return None
        changes = insert_before(line, f"{scaler}.unscale_({optimizer})")
        return Fix("unsafe", f"unscale the gradients before clipping (`{scaler}.unscale_({optimizer})`)", changes)


def _message(clip: Clip, scaler: str, optimizer: str, caller: Optional[LocalCall]) -> str:
    text = code_for(clip.node)
    if len(text) > 60:
        text = text[:57] + "..."
    via = f" (called from `{caller.site.function.name.value}`)" if caller and caller.site.function else ""
    return (
        f"`{text}`{via} clips gradients that `{scaler}` still holds multiplied by the loss scale, so the limit "
        f"is compared with scaled norms; call `{scaler}.unscale_({optimizer})` before clipping"
    )
