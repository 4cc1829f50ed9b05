"""SF404 missing-zero-grad: a loop runs backward and an optimizer step on every pass but never clears gradients.

A query over `events`: for each optimizer step (the `optimizers` part says what is stepped; the step must
be the optimizer's own, or a same-file wrapper's that runs one: `events.stepped_by`), the pass it
runs in is the innermost `for`/`while` loop it shares with a backward pass, or, for a step function
without a loop of its own, the loop of the file that calls it (or the Lightning trainer, for a manual
`training_step`). Gradients are cleared in that pass when a clear of any form (`opt.zero_grad()`,
`model.zero_grad()`, `p.grad = None`, `p.grad.zero_()`, `p.grad = g`, a fresh `dist_autograd.context()`)
runs in it, in a function it calls (of this file, or of another scanned file or a method of an
instance, through the `summaries` part's `zero_grad` effects), or may run from a hook: a lambda, or a function of the file that steps
nothing (a callback). With several optimizers, a clear counts only where it may reach the stepped
parameters (`grad_coverage`): `opt_g.zero_grad()` does not clear what `opt_d = Adam(D.parameters())` steps. Silent when a new optimizer is built in the pass (fresh state, SF408's business) and
for `torch.autograd.grad`. The message names the `if`s that gate the step (`events.gates`).
Fix (unsafe): `opt.zero_grad(set_to_none=True)` right after the step.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.statements import insert_after
from stabfix.fixes.syntax import code_for, starts_statement
from stabfix.model.calls.events import ClearGrad, Event, Gate, Site, Step, stepped_optimizer
from stabfix.model.calls.optimizers import optimizer_name_strength
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import dotted_name
from stabfix.model.training.step_frames import loop_header


class MissingZeroGrad(Checker):
    code = "SF404"
    tokens = ("backward",)
    tokens_elsewhere = ("backward", ".step(", "zero_grad")  # a helper of another module may run the rest (`events_through_calls`)
    also_needs = (("step",),)
    needs = ("optimizers", "events", "summaries", "events_through_calls", "grad_clears")

    _constructor: Optional[cst.Call] = None  # the stepped optimizer's construction, while one step is judged
    _elsewhere: tuple[ClearGrad, ...] = ()  # clears in its pass that reach other parameters

    def leave_Module(self, original_node: cst.Module) -> None:
        events = self.model.events_through_calls
        if self.model.grad_clears.by_a_hook() or self.model.grad_clears.overwritten():
            return
        reported: set[int] = set()
        self._judged_calls: set[int] = set()  # calls whose function's own step was reported through them
        # a function's own steps first: a helper of this file is reported at its step, through its callers
        for step in sorted(events.of_kind("step"), key=lambda event: bool(events.via(event))):
            assert isinstance(step, Step)
            stepped = self._stepped(step)
            if step.site.in_lambda or stepped is None or id(step.node) in self._judged_calls:
                continue
            wrapper = events.stepped_by(step, stepped[0])
            if wrapper is not None and not self._runs_an_optimizer_step(wrapper):
                continue  # handed to a wrapper not shown to step an optimizer: it may step an engine, or clear
            self._constructor = getattr(stepped[1], "constructor", None)
            self._elsewhere = ()
            found = self._pass_without_clear(step, [e for f in wrapper or [] for e in events.in_function(f)])
            if found is None or id(found[0]) in reported:
                continue
            reported.add(id(found[0]))
            optimizer = code_for(stepped[0])
            message = _message(step, optimizer, *found[1:], self._elsewhere)
            self.report(step.node, message, self._fix(step, optimizer))

    def _stepped(self, step: Step) -> tuple[cst.BaseExpression, object] | None:
        return stepped_optimizer(step, self.model.optimizers, self.model.events_through_calls) or _short_named(step)

    def _runs_an_optimizer_step(self, functions: list[cst.FunctionDef]) -> bool:
        """Whether these functions, or those they call, run an optimizer's own step."""
        events = self.model.events_through_calls
        ran = [e for f in functions for e in events.in_function(f)]
        for inner in ran + [e for f in events.functions_called(ran) for e in events.in_function(f)]:
            stepped = self._stepped(inner) if isinstance(inner, Step) else None
            if stepped is not None and events.stepped_by(inner, stepped[0]) is None:  # type: ignore[arg-type]
                return True
        return False

    def _pass_without_clear(self, step: Step, wrapped: list[Event]) -> Optional[tuple[cst.CSTNode, str, list[Gate]]]:
        """The loop (or step function) whose passes run the step (and `wrapped`, the events of the wrapper
        it hands the optimizer to) with no gradient clear, how to name it, and the `if`s that gate the step."""
        events = self.model.events_through_calls
        function = step.site.function
        here = [e for e in events.in_function(function) if not e.site.in_lambda]
        # a backward and a step of one helper of this file: its own callers' loops judge it, at the step
        backwards = [e for e in here if events.accumulates(e)]
        loop = None
        for backward in backwards:
            shared = events.innermost_loop(step.site, backward.site)
            if shared is not None and (loop is None or _depth(step.site, shared) > _depth(step.site, loop)):
                loop = shared
        if loop is None and step.site.any_loops and self._backward_in(events.functions_called(
            events.iteration(step.site.any_loops[-1], "call")
        )):
            loop = step.site.any_loops[-1]  # `for batch in loader: self._backward(batch); opt.step()`
        while loop is not None and _leaves_after_step(step.site, loop):
            outer = step.site.any_loops[: _depth(step.site, loop)]
            loop = outer[-1] if outer else None  # a retry loop (`while True: ...; break`): its pass is the outer one's
        if loop is not None:
            if not self._uncleared(events.iteration(loop) + wrapped):
                return None
            return loop, f"`{loop_header(loop)}`", events.gates(step.site, loop)
        if function is None or not backwards:
            return None
        callers = [c for c in events.calls_of(function.name.value) if c.on_self == (step.site.cls is not None)]
        if step.site.cls is not None:
            callers += events.calls_on_instances_of(step.site.cls, function.name.value)
        for call in callers:
            if call.site.any_loops and not call.site.in_lambda:
                outer = call.site.any_loops[-1]
                if self._uncleared(events.iteration(outer) + here + wrapped):
                    self._judged_calls.add(id(call.node))
                    where = f"`{loop_header(outer)}` (through `{function.name.value}()`)"
                    return function, where, events.gates(call.site, outer) + events.gates(step.site, function)
                return None
        if not callers and step.site.cls is not None and self._lightning(step.site.cls):
            if function.name.value == "training_step" and self._uncleared(here + wrapped):
                return function, "Lightning's manual-optimization `training_step`", events.gates(step.site, function)
        return None

    def _uncleared(self, iteration: list[Event]) -> bool:
        """No gradient clear in the pass or the functions it calls, and no optimizer built in it."""
        seen, cleared_unseen = self.model.grad_clears.in_pass(iteration)
        clears = self.model.grad_clears.is_clear
        return not cleared_unseen and not any((clears(e) and self._reaches(e)) or e.kind == "optimizer" for e in seen)

    def _reaches(self, clear: Event) -> bool:
        """Whether a clear may empty the gradients the stepped optimizer uses (`grad_clears.reaches`)."""
        if not isinstance(clear, ClearGrad) or self.model.grad_clears.reaches(clear, self._constructor):
            return True
        self._elsewhere += (clear,)
        return False

    def _backward_in(self, functions: list[cst.FunctionDef]) -> bool:
        events = self.model.events_through_calls
        return any(events.accumulates(e) for function in functions for e in events.in_function(function, "backward"))

    def _lightning(self, cls: cst.ClassDef) -> bool:
        for base in cls.bases:
            name = self.qualified_name(base.value) or code_for(base.value)
            if name.rsplit(".", 1)[-1] in vocab.LIGHTNING_MODULE_BASES:
                return True
        return False

    def _fix(self, step: Step, optimizer: str) -> Fix | None:
        if self.model.events_through_calls.via(step):
            return None  # a helper's step: where its clear belongs is the helper's business
        line = step.site.statement
        if line is None or not starts_statement(line, step.node):  # type: ignore[arg-type]
            return None
        changes = insert_after(line, f"{optimizer}.zero_grad(set_to_none=True)")
        # `zero_grad(set_to_none=...)` arrived in torch 1.7.
        return Fix("unsafe", f"clear gradients after each step (`{optimizer}.zero_grad(set_to_none=True)`)", changes,
                   requires_torch=(1, 7))


def _short_named(step: Step) -> tuple[cst.BaseExpression, object] | None:
    """`opt.step()` on a name like `opt`/`optim`: the `optimizers` part needs a `zero_grad()` or
    `param_groups` use to take such a name as an optimizer, and a missing `zero_grad()` is this rule's
    finding. The name only tells it from `env.step()`; the backward pass in the same pass decides."""
    receiver = step.candidates[0] if step.candidates else None
    name = dotted_name(receiver) if receiver is not None else None
    if name is not None and optimizer_name_strength(name.rsplit(".", 1)[-1]) is not None:
        return receiver, None
    return None


def _leaves_after_step(site: Site, loop: cst.CSTNode) -> bool:
    """The step's block inside `loop` ends with `break`/`return`: the loop does not repeat a step."""
    body = getattr(loop, "body", None)
    inside = False
    for block in site.blocks:
        inside = inside or block is body
        statements = getattr(block, "body", ())
        if inside and statements and type(statements[-1]) is cst.SimpleStatementLine:
            if type(statements[-1].body[-1]) in (cst.Break, cst.Return):
                return True
    return False


def _depth(site: Site, loop: cst.CSTNode) -> int:
    return next((index for index, enclosing in enumerate(site.any_loops) if enclosing is loop), -1)


def _message(step: Step, optimizer: str, where: str, gates: list[Gate], elsewhere: tuple[ClearGrad, ...]) -> str:
    when = f"on every pass of {where}"
    if gates:  # an accumulation gate does not help: what it sums is never emptied either
        tests = " and ".join(f"`{code_for(test)}` {'is false' if negated else 'holds'}" for test, negated in gates)
        when = f"on the passes of {where} where {tests},"
    nothing = "nothing clears the gradients"
    if elsewhere:
        others = ", ".join(dict.fromkeys(f"`{code_for(clear.node)}`" for clear in elsewhere))
        nothing = f"nothing clears the gradients of the parameters it steps ({others} clears other parameters)"
    return (
        f"`{code_for(step.node)}` runs {when} after a backward pass, but {nothing}, so each "
        f"step applies the sum of all earlier ones; call `{optimizer}.zero_grad(set_to_none=True)` after the step"
    )
