"""SF419 backward-in-evaluation: an evaluation runs a backward pass and leaves its gradients behind.

A query over `modes`, `events` and `summaries`. An evaluation is the region an eval switch governs
(`modes.region`: after `model.eval()` up to the switch back). A finding is a backward pass there that adds
into `.grad` (`events.accumulates`: not `torch.autograd.grad`, not `backward(inputs=...)`), in the region's
own code or in a function it calls (`summaries.with_calls`: a `validate(model)` helper that differentiates),
when
- nothing after it in the function clears the gradients or steps an optimizer (a clear, a step, or a call
  of a function that does either): test-time adaptation and a training step that freezes BatchNorm with
  `model.eval()` step, saliency code that clears does not leak;
- the switched model's parameters are not frozen there (`model.eval().requires_grad_(False)`);
- the file trains, and a training pass (the innermost loop around an optimizer step outside every
  evaluation, or the step's function) runs its backward before any clear: `loss.backward();
  opt.step(); opt.zero_grad()` adds what the evaluation left to its first step, while a pass that
  starts with `opt.zero_grad()` discards it. A file with no training step is left alone.
No fix: where to clear (or whether to use `torch.autograd.grad`) is the author's call.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.shape import Shape
from stabfix.shape_queries import eval_switches
from stabfix.fixes.syntax import code_for
from stabfix.model.calls.event_kinds import Backward, Event, LocalCall
from stabfix.model.training.modes import Switch, in_harness


class BackwardInEvaluation(Checker):
    code = "SF419"
    tokens = (".eval()", ".train(False)")
    also_needs = (("backward",), ("step",))
    needs = ("modes", "events", "summaries")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # a backward inside the region of an eval switch of this file
        return bool(eval_switches(shape))

    def leave_Module(self, original_node: cst.Module) -> None:
        modes, events = self.model.modes, self.model.events
        evaluations: list[tuple[Switch, list[cst.CSTNode]]] = []
        for switch in modes.switches:
            if switch.to_eval and not switch.grad_off and not in_harness(switch.function, switch.cls):
                region = modes.region(switch)
                if region:
                    evaluations.append((switch, region))
        if not evaluations:
            return
        leaking = self._training_pass_leaks({id(statement) for _, region in evaluations for statement in region})
        if leaking is None:
            return
        reported: set[int] = set()
        for switch, region in evaluations:
            if switch.freezes or modes.scan(region, switch.receiver).frozen:
                continue
            statements = {id(statement) for statement in region}
            ran = self.model.summaries.with_calls(events.in_function(switch.function))
            for index, event in enumerate(ran):
                if not self._evaluation_backward(event, statements) or id(event.node) in reported:
                    continue
                if self._cleared_after(ran[index + 1:], statements):
                    continue
                reported.add(id(event.node))
                self.report(event.node, self._message(switch, event, leaking))

    def _evaluation_backward(self, event: Event, region: set[int]) -> bool:
        if not isinstance(event, Backward) or not self.model.events.accumulates(event) or not self._inside(event.node, region):
            return False
        if type(event.node) is cst.Call and any(arg.keyword and arg.keyword.value == "inputs" for arg in event.node.args):
            return False  # `loss.backward(inputs=[x])` accumulates into `x` only
        return not self._steps(event.node)  # a helper that differentiates and steps trains (test-time adaptation)

    def _cleared_after(self, later: list[Event], region: set[int]) -> bool:
        """A clear or a step runs after the evaluation's backward and before a training backward adds to it."""
        for event in later:
            if event.kind in ("clear", "step") or (isinstance(event, LocalCall) and self._steps(event.node)):
                return True
            if isinstance(event, Backward) and self.model.events.accumulates(event) and not self._inside(event.node, region):
                return False
        return False

    def _steps(self, node: cst.CSTNode) -> bool:
        """A call of a function that steps an optimizer (its summary's `step` effect)."""
        if type(node) is not cst.Call:
            return False
        return any(effect.kind == "step" for effect in self.model.summaries.effects_at(node))

    def _evaluates(self, node: cst.CSTNode) -> bool:
        """A call of a function that switches a model to eval (its backward is an evaluation's, judged there)."""
        return type(node) is cst.Call and not _is_backward_call(node) and any(
            effect.kind == "eval" for effect in self.model.summaries.effects_at(node))

    def _inside(self, node: cst.CSTNode, statements: set[int]) -> bool:
        """The node starts on a line of the statements (ids of those of one region or more). A region's
        statements are whole lines of a block (`ModeSwitches.region`), so that is: the node is below one of
        them, and not in its decorators (a definition's lines start at `def`/`class`); read from the parents,
        not from the statements' positions (placing a long statement generates its code)."""
        parent = self.model.tree.parent
        child, current = None, node
        while current is not None:
            if id(current) in statements and not (
                type(current) in _DEFINITIONS and any(child is decorator for decorator in current.decorators)
            ):
                return True
            child, current = current, parent(current)
        return False

    def _training_pass_leaks(self, evaluated: set[int]) -> Event | None:
        """The backward of a training pass that runs before any gradient clear in that pass (it adds to what
        is already in `.grad`); None when every training pass clears first, or the file steps nothing outside
        its evaluations."""
        events, summaries = self.model.events, self.model.summaries
        for step in events.of_kind("step"):
            if step.site.in_lambda or self._inside(step.node, evaluated):
                continue
            loop = step.site.any_loops[-1] if step.site.any_loops else None
            ran = events.iteration(loop) if loop is not None else self._pass_around(step.site.function)
            first = next((e for e in summaries.with_calls(ran) if e.kind == "clear" or (
                e.kind == "backward" and events.accumulates(e) and not self._evaluates(e.node))), None)
            if first is not None and first.kind == "backward":
                return first
        return None

    def _pass_around(self, function: cst.FunctionDef | None) -> list[Event]:
        """A step function without a loop of its own: the pass of the loop that calls it (a clear there before
        the call runs first), else its own events."""
        events = self.model.events
        name = function.name.value if function is not None else None
        for call in events.calls_of(name) if name else []:
            if call.site.any_loops and not call.site.in_lambda:
                return events.iteration(call.site.any_loops[-1])
        return events.in_function(function)

    def _message(self, switch: Switch, backward: Event, leaking: Event) -> str:
        where = f" in `{switch.function.name.value}()`" if switch.function is not None else ""
        through = "" if type(backward.node) is cst.Call and _is_backward_call(backward.node) else " (a backward pass inside it)"
        return (
            f"`{_short(backward.node)}`{through} runs after `{switch.receiver}.eval()`{where} and nothing clears the "
            f"gradients it leaves before the next training pass, whose `{_short(leaking.node)}` (line "
            f"{self.context.positions.line(leaking.node)}) runs before its own `zero_grad()`: the evaluation's gradients "
            f"are added to that step's update; clear them after the evaluation (`{switch.receiver}.zero_grad(set_to_none=True)`) "
            "or take gradients with `torch.autograd.grad`"
        )


_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


def _is_backward_call(call: cst.Call) -> bool:
    return type(call.func) is cst.Attribute and call.func.attr.value == "backward"


def _short(node: cst.CSTNode) -> str:
    text = " ".join(code_for(node).split())
    return text if len(text) <= 50 else text[:47] + "..."
