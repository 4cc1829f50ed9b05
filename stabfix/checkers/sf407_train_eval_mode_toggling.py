"""SF407 train-eval-mode-toggling: `.train()` never restored after an evaluation in the training loop,
or a validation loop that runs in train mode.

A query over the `modes` part (mode switches) and `events` (backward passes, calls of the file's
functions). Two findings:
- *not restored*: a loop that trains (a backward pass in it, directly, in a nested loop or in a helper it
  calls) switches a trained module to eval mode — `model.eval()` in the loop, or a helper of the file that
  calls `.eval()` on what it is passed, or on `self.<attr>`, and does not switch it back, any number of
  calls deep (the `summaries` part's effects) — and nothing in the loop switches it
  back (`model.train()`, `model.train(mode)`, in the loop or in a helper it calls). A module is trained
  when the file switches it to train mode somewhere or builds an optimizer from its parameters. Frozen
  teachers, EMA and target networks are never trained and stay silent, and so does a loop that rebinds
  the module (`model = Net()` per fold: the next iteration trains a new one). Fix (unsafe): insert
  `model.train()` after the evaluation (after the helper call's line, or at the end of the direct eval's
  block) where that line is a plain statement of the loop. Whether a module is
  trained: `training/trained_modules.py`.
- *validation in train mode*: under `torch.no_grad()` (around it, or around every call of its function in the
  file, callers of callers included), a loop over data (no backward in it) runs
  forwards of a module whose last switch before it, in the same function, is `.train()`. Report only.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.shape import Shape
from stabfix.shape_queries import loops_contain
from stabfix.model.calls.events import LocalCall
from stabfix.model.source.syntax import preorder
from stabfix.model.training.modes import Switch, in_harness, owns, within
from stabfix.model.training.step_frames import loop_header
from stabfix.model.training.trained_modules import forwarded_with_grad, is_trained

Loop = Union[cst.For, cst.While]


@dataclass
class _Loop:
    node: Loop
    function: Optional[cst.FunctionDef]
    start: int
    end: int = 0


class TrainEvalModeToggling(Checker):
    code = "SF407"
    tokens = (".eval()", ".train(")
    # the switch may sit in a helper of another scanned file that this training loop calls
    tokens_elsewhere = (".backward(",)
    also_needs = (("backward",),)
    needs = ("modes", "events", "summaries", "events_through_calls")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # an eval switch or a helper's call, or a forward, in a loop of the file
        return loops_contain(shape, lambda node: type(node) is ast.Call)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.loops: list[_Loop] = []
        self._open: list[_Loop] = []

    def visit_For(self, node: cst.For) -> None:
        self._open.append(_Loop(node, self.model.enclosing.innermost_function(), self.model.names.position))

    def leave_For(self, original_node: cst.For) -> None:
        loop = self._open.pop()
        loop.end = self.model.names.position
        self.loops.append(loop)

    visit_While, leave_While = visit_For, leave_For

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: set[int] = set()
        for loop in sorted(self.loops, key=lambda item: item.start):
            if in_harness(loop.function):
                continue  # a test toggles modes to compare them
            for node, receiver, after in self._unrestored_evals(loop):
                if id(node) not in reported:
                    reported.add(id(node))
                    self.report(node, self._not_restored(receiver, loop), self._fix(receiver, after, loop))
        self._validation_in_train_mode()

    # -- not restored ----------------------------------------------------------------------------------
    def _in(self, loop: _Loop, order: int, function) -> bool:
        return function is loop.function and loop.start <= order < loop.end

    def _unrestored_evals(self, loop: _Loop):
        modes, events = self.model.modes, self.model.events_through_calls  # a helper's backward trains the loop
        # the loop's own function's events and switches (from the parts' indexes), then those in the loop;
        # calls of a method on an instance (`Evaluator().run(model)`) too
        calls = [e for e in [*events.in_function(loop.function, "call"), *events.instance_calls_in(loop.function)]
                 if self._in(loop, e.site.names_order, e.site.function)]
        summaries = self.model.summaries
        helpers = [(e, summaries.function_of_call(e.node)) for e in calls if isinstance(e, LocalCall)]
        helpers = [(e, h) for e, h in helpers
                   if h is not None and self.model.names.definition_of(e.node) is not loop.function]
        trains = any(
            self._in(loop, e.site.names_order, e.site.function) for e in events.in_function(loop.function, "backward")
        ) or any(
            h.effects_of("backward", "step") for _, h in helpers
        )
        if not trains:
            return []
        switches = [s for s in modes.in_function(loop.function) if self._in(loop, s.order, s.function)]
        evals = [(s.call, s.receiver, s) for s in switches if s.to_eval and not _leaves(modes.region(s))]
        restored = [s.receiver for s in switches if not s.to_eval]
        for event, _ in helpers:
            # the helper's own switches and those of the helpers it calls, any number of calls deep
            for effect in summaries.effects_at(event.node):
                if effect.kind == "train":
                    restored.append(effect.target or "")  # a train switch the file cannot map restores anything
                elif effect.kind == "eval" and not effect.restored and effect.target is not None:
                    evals.append((event.node, effect.target, event))
        return [
            (node, receiver, after)
            for node, receiver, after in evals
            if (is_trained(receiver, modes, self.model.events) or forwarded_with_grad(receiver, loop.node, self.model.names))
            and not any(r == "" or owns(r, receiver) or owns(receiver, r) for r in restored)
            and not modes.rebound_between(receiver, loop.function, loop.start, loop.end)  # a new module each iteration
        ]

    def _not_restored(self, receiver: str, loop: _Loop) -> str:
        return (
            f"`{receiver}` is switched to eval mode inside the training loop `{loop_header(loop.node)}` and never back, "
            f"so the next iteration trains it with dropout off and batch-norm statistics frozen; call `{receiver}.train()` "
            "after the evaluation"
        )

    def _fix(self, receiver: str, after, loop: _Loop) -> Optional[Fix]:
        """Insert `receiver.train()` after the helper call's line, or after the last line of a direct eval's block."""
        if isinstance(after, Switch):
            line, block = self.model.modes.statement_of(after)
            body = list(getattr(block, "body", ()))
            anchor = body[-1] if body else None
        else:
            line = after.site.statement
            block = after.site.blocks[-1] if after.site.blocks else None
            body = list(getattr(block, "body", ()))
            anchor = line if line is not None and line.body[0] is not None and within(after.node, line) else None
        if anchor is None or anchor not in body or type(anchor) is not cst.SimpleStatementLine:
            return None
        if any(type(small) in (cst.Return, cst.Continue, cst.Break, cst.Raise) for small in anchor.body):
            return None
        if not within(block, loop.node.body) and block is not loop.node.body:
            return None
        restore = cst.parse_statement(f"{receiver}.train()\n")
        index = body.index(anchor)
        new_body = body[: index + 1] + [restore] + body[index + 1:]
        return Fix("unsafe", f"switch `{receiver}` back to train mode after the evaluation", {block: block.with_changes(body=new_body)})

    # -- validation in train mode ----------------------------------------------------------------------
    def _validation_in_train_mode(self) -> None:
        modes = self.model.modes
        reported: set[int] = set()
        events = self.model.events
        for loop in self.loops:
            backwards = events.in_function(loop.function, "backward")
            if in_harness(loop.function) or any(self._in(loop, e.site.names_order, e.site.function) for e in backwards):
                continue
            if not self._under_no_grad(loop) and not self.model.summaries.always_called_without_grad(loop.function):
                continue
            for receiver in sorted({s.receiver for s in modes.in_function(loop.function) if not s.to_eval}):
                forwards = [call for call, _ in modes.scan([loop.node], receiver).forwards]
                if forwards and id(forwards[0]) not in reported and modes.mode_before(receiver, loop.function, loop.start) == "train":
                    reported.add(id(forwards[0]))
                    self.report(forwards[0], (
                        f"`{receiver}` runs this no-grad evaluation loop `{loop_header(loop.node)}` in train mode (its last switch "
                        f"before it is `{receiver}.train()`): dropout stays on and batch norm updates its statistics; call "
                        f"`{receiver}.eval()` before the loop and `{receiver}.train()` after it"
                    ))

    def _under_no_grad(self, loop: _Loop) -> bool:
        """The loop runs where autograd is off: the first variable its header reads is read under `no_grad`."""
        header = loop.node.iter if type(loop.node) is cst.For else loop.node.test
        first = next(iter(_names(header)), None)
        use = self.model.names.uses.get(first) if first is not None else None
        return bool(use and use.grad_off)


def _leaves(region: list[cst.CSTNode]) -> bool:
    """The evaluation ends the loop or the function (`break`, `return`): no iteration follows it."""
    last = region[-1] if region else None
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) in (cst.Break, cst.Return, cst.Raise)


def _names(expr: cst.CSTNode) -> list[cst.Name]:
    return [node for node in preorder(expr) if type(node) is cst.Name]
