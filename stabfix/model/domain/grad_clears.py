"""Where the file clears gradients: which events clear them, what a pass clears, and clears run as hooks.

Answers "are gradients cleared here?" for the event-order rules (SF404, SF402): `is_clear(event)` (a clear
of any form: `opt.zero_grad()`, `model.zero_grad()`, `p.grad.zero_()`, a fresh `dist_autograd.context()`,
or an assignment `p.grad = None` / `p.grad = g`), `through_summary(event)` (a call whose function, of this
file or another, clears gradients its caller cannot name: a `zero_grad` effect on a local of its own),
`reaches(clear, constructor)` (a `zero_grad()` may empty the gradients of the optimizer that
`constructor` builds: another optimizer's or model's, shown to share no parameter with it, does not;
`flow/grad_coverage.py`), `overwritten()` (the file's backward is MXNet's, which overwrites gradients
by default, not torch's: nothing needs clearing), `in_pass(iteration)` (the events a pass runs, its own
and those of the file's functions it calls, and whether a call it makes that is not followed clears
through its summary), `zero_grad_between(events, start, end)` (the first `zero_grad()` strictly between
two orders of one function's events), `steps(function)` (the function steps an optimizer itself or
through a call) and `by_a_hook()` (a clear that runs when something else calls it: in a lambda, or in a
function that steps nothing and that the file never calls itself). Built on `names`, `optimizers`,
`events`, `summaries` and `events_through_calls`.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.events import ClearGrad, Event, GradWrite, LocalCall
from stabfix.model.flow.grad_coverage import GradCoverage
from stabfix.model.source import vocabulary as vocab


class GradClears:
    def __init__(self, imports, names, optimizers, events, summaries, through_calls) -> None:
        self._imports = imports
        self._names = names
        self._optimizers = optimizers
        self._events = events
        self._summaries = summaries
        self._through_calls = through_calls
        self._coverage: Optional[GradCoverage] = None
        # per function: whether it steps (asked again for every event of the function by `by_a_hook`)
        self._steps: dict[cst.FunctionDef, bool] = {}

    def reaches(self, clear: ClearGrad, constructor: Optional[cst.Call]) -> bool:
        """Whether a clear may empty the gradients the optimizer `constructor` builds uses (another
        optimizer's or model's `zero_grad()`, shown to share no parameter with it, does not)."""
        if self._coverage is None:
            built = [e.node for e in self._through_calls.of_kind("optimizer") if type(e.node) is cst.Call]
            self._coverage = GradCoverage(self._optimizers, self._names, built)
        return self._coverage.may_clear(clear.receiver, clear.how, clear.site.scope, constructor)

    def overwritten(self) -> bool:
        """The file's backward is MXNet's (gradients overwritten by default), not torch's."""
        modules = {name.split(".", 1)[0] for name in self._imports.aliases.values()}
        return "torch" not in modules and any(m in modules for m in vocab.OVERWRITING_AUTOGRAD_MODULES)

    @staticmethod
    def is_clear(event: Event) -> bool:
        return event.kind == "clear" or (isinstance(event, GradWrite) and type(event.node) is cst.Assign)

    def through_summary(self, event: Event) -> bool:
        """A call whose function (another file's, or one `functions_called` does not follow) clears
        gradients its caller cannot name (a `zero_grad` effect on a local of its own: maybe the stepped
        ones); a clear of what the caller names is spliced in at the call (`events_through_calls`) and
        judged like the caller's own."""
        if not isinstance(event, LocalCall) or type(event.node) is not cst.Call:
            return False
        return any(effect.kind == "zero_grad" and effect.target is None
                   for effect in self._summaries.effects_at(event.node))

    def in_pass(self, iteration: list[Event]) -> tuple[list[Event], bool]:
        """The events a pass runs (`iteration`, and those of the functions of the file it calls), and
        whether a call into a function not followed here (another file's, or too deep) clears gradients
        through its summary; a call into a followed function is judged by that function's own clears."""
        events = self._through_calls
        seen = list(iteration)
        followed = events.functions_called(iteration)
        for function in followed:
            seen.extend(events.in_function(function))
        unseen = any(self.through_summary(event) and not _followed(events, event, followed) for event in seen)
        return seen, unseen

    def by_a_hook(self) -> bool:
        """A clear that runs when something else calls it: in a lambda, or in a function that steps
        nothing and that the file never calls itself (a callback, `on_before_optimizer_step`, a hook
        registered on the optimizer); a helper the file calls counts only where it is called."""
        events = self._through_calls
        for event in events.events:
            # where the event sits first: what a call clears takes its function's summary (maybe another file's)
            function = event.site.function
            if not event.site.in_lambda and not (
                function is not None and not self.steps(function)
                and not events.calls_of(function.name.value)  # called by a framework or registered as a hook
            ):
                continue
            if self.is_clear(event) or self.through_summary(event):
                return True
        return False

    @staticmethod
    def zero_grad_between(events: list[Event], start: float, end: float) -> Optional[ClearGrad]:
        """The first `zero_grad()` among `events` (one function's, in order) that runs between two orders."""
        return next((event for event in events if isinstance(event, ClearGrad) and event.how == "zero_grad"
                     and start < event.site.order < end), None)

    def steps(self, function: cst.FunctionDef) -> bool:
        """Whether the function steps an optimizer itself or through a call (`fit` calling `train_step`):
        a clear it runs then sits in a training pass, not in a hook."""
        found = self._steps.get(function)
        if found is None:
            found = self._steps[function] = self._steps_uncached(function)
        return found

    def _steps_uncached(self, function: cst.FunctionDef) -> bool:
        if self._events.in_function(function, "step"):
            return True
        return any(
            isinstance(event, LocalCall) and type(event.node) is cst.Call
            and any(effect.kind == "step" for effect in self._summaries.effects_at(event.node))
            for event in self._events.in_function(function)
        )


def _followed(events, call: Event, followed: list[cst.FunctionDef]) -> bool:
    """Whether every function of this file that `call` runs is among `followed`."""
    runs = events.functions_called([call], depth=1)
    return bool(runs) and all(any(function is seen for seen in followed) for function in runs)
