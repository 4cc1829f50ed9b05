"""Which loops are training loops and which functions are steps (the `steps` part's recognition,
mixed into `StepIndex`): updates done in a body itself or through the file's own functions, step
names as supporting evidence, RL-style update loops, updates handed to unseen code, and the text a
file must contain for any of them to exist (`STEP_TOKENS`, the pre-filter of step rules).
"""

from __future__ import annotations

import re
from typing import Union

import libcst as cst

from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.training.step_frames import (
    FunctionFrame,
    LoopFrame,
    PathFacts,
    StepCall,
    draws_per_iteration,
    is_harness,
    is_live_loss,
    iterates_over,
    never_a_step,
    per_iteration_event_handler,
    target_names,
)
from stabfix.model.flow.values import Values

# --- the pre-filter of step rules ---------------------------------------------------------------

# Text that a file must contain for any training loop or step function to exist in it, so for any
# `step_path`, `helper_path` or `in_training` to be found: a rule that only reports on a step path can
# name these as an `also_needs` group and skip (never parse) files without them. Why each is needed:
# a training loop or a step function does a backward pass (an attribute call `.backward`/`.manual_backward`,
# or `torch.autograd.backward`, whose name the file spells in the call or its import) or an optimizer
# step (`.step(...)`, `optimizer_step`), or calls / is named like a step function (STEP_FUNCTION_NAMES),
# or is a per-batch hook (PER_BATCH_HOOKS), a `compute_loss` override, or an ignite handler registered
# on `ITERATION_COMPLETED`/`ITERATION_STARTED`, or hands its loss and an optimizer to unseen code (an
# OPTIMIZER_TOKENS spelling, see `hands_over_update`); update loops and callees every step calls need one of those.
# The names of both vocabularies are in the group (those not already containing `step` or `backward`), so a
# name added there is covered here.
OPTIMIZER_TOKENS = ("optim", "Optim", "OPTIM")
STEP_TOKENS: tuple[str, ...] = (
    "backward", "step", "compute_loss", "ITERATION_COMPLETED", "ITERATION_STARTED", *OPTIMIZER_TOKENS,
    *sorted(
        name for name in words.STEP_FUNCTION_NAMES | words.PER_BATCH_HOOKS if "step" not in name and "backward" not in name
    ),
)


class StepRecognition:
    """Training loops and step functions among the frames `StepIndex` records (ask after the traversal)."""

    # recorded by `StepIndex` (see there)
    imports: ImportTracker
    names: Names | None
    values: Values | None

    def is_training_loop(self, loop: LoopFrame) -> bool:
        key = id(loop)
        if key not in self._training_cache:
            facts = loop.facts
            called = {name.lstrip("_") for name in facts.calls}
            self._training_cache[key] = not (loop.function is not None and is_harness(loop.function.name)) and (
                self._has_update(facts)
                or bool(called & words.STEP_FUNCTION_NAMES)
                or bool(facts.calls & self._self_evident_step_names())
            )
        return self._training_cache[key]

    def is_step_function(self, function: FunctionFrame) -> bool:
        key = id(function)
        if key not in self._step_cache:
            self._step_cache[key] = self._is_step_by_itself(function) or (
                self._has_update(function.facts)
                and not is_harness(function.name)
                and not words.NEVER_STEP_FUNCTION.match(function.name.lstrip("_") or function.name)
                and function.name in self._names_called_in_training_loops()
            )
        return self._step_cache[key]

    def is_update_loop(self, loop: LoopFrame) -> bool:
        """An RL-style update loop: each iteration draws a batch and runs a whole update on what it made of it.

        `for update in range(n): batch = next(it); <rollout>; for epoch in range(k): for mb in ...:
        loss.backward(); optimizer.step()`, or `for prompts in loader: ...; self.ppo_train()` whose
        training loops only repeat over data it builds itself. The loop draws its data (iterates
        something other than a counter or constants of the code, or calls `next()`), and every loop between it and the parameter
        update repeats over that iteration's data: a counter (`range(ppo_epochs)`) or a name assigned inside
        the iteration, never a loader from outside or the drawn item itself (a loader per dataset), never
        `next()`; and no optimizer is built inside (a k-fold or trial loop trains a fresh model). An epoch
        loop (a counter whose inner loop draws the batches), a loop over clients that each train on their
        own loader, curriculum stages whose inner loop draws batches, and the phases of a benchmark
        (`for phase, n in enumerate([10, 20]): for _ in range(n): <step>`, warm-up then timed: each phase
        runs many steps) are not update loops.
        """
        key = id(loop)
        if key not in self._update_cache:
            self._update_cache[key] = False  # a recursive call (a method calling itself) is not one
            self._update_cache[key] = (
                not (loop.function is not None and is_harness(loop.function.name))
                and not self.is_training_loop(loop)
                and draws_per_iteration(loop, self.names)
                and (
                    # a loop nested in this one is written in its function
                    any(self._repeats_over_iteration(inner, loop, set()) for inner in self._loops_in(loop.function))
                    or any(
                        self._repeats_over_iteration(inner, None, function.facts.bound)
                        for name in loop.facts.calls
                        for function in self._functions_named(name)
                        if not is_harness(function.name)
                        and not words.NEVER_STEP_FUNCTION.match(function.name.lstrip("_") or function.name)
                        for inner in self._loops_in(function)
                    )
                )
            )
        return self._update_cache[key]

    def _repeats_over_iteration(self, inner: LoopFrame, outer: LoopFrame | None, bound: set[str]) -> bool:
        """`inner` is a training loop nested in `outer` (or at the top of its function when `outer` is
        None) and each loop from it up to `outer` repeats over data bound in the iteration."""
        if not self.is_training_loop(inner):
            return False
        chain = []
        current: LoopFrame | None = inner
        while current is not None and current is not outer:
            chain.append(current)
            current = current.enclosing
        if current is not outer or not chain:
            return False
        names = set(bound).union(*(loop.facts.bound for loop in chain))
        for loop in chain:
            if type(loop.node) is cst.For:
                names.update(name.value for name in target_names(loop.node.target))
        if outer is not None:
            if outer.facts.builds_optimizer:
                return False  # a fresh optimizer each iteration: a fold, trial or client run, not a step
            names |= outer.facts.bound
        return all(
            "next" not in loop.facts.calls and not loop.facts.builds_optimizer and iterates_over(loop.node, names)
            for loop in chain
        )

    def is_called_every_step(self, function: FunctionFrame) -> bool:
        """A function of the file that a training loop or step function calls behind no gate, or that such a
        function calls behind no gate (`run_step` -> `optimize()` -> `_grad_norm()`): it runs every step."""
        return not never_a_step(function.name) and function.name in self._called_every_step()

    def _called_every_step(self) -> set[str]:
        """Names that a training loop or a step function calls behind no gate (asked after the traversal,
        like every step query; one set instead of a walk over all loops and functions per question)."""
        if self._every_step_callees is None:
            called = {
                name for loop in self._loops if self.is_training_loop(loop) for name in loop.facts.ungated_calls
            } | {name for frame in self._functions if self.is_step_function(frame) for name in frame.facts.ungated_calls}
            # and what those call behind no gate: `run_step` -> `optimize()` -> `self._grad_norm()`
            pending = list(called)
            while pending:
                name = pending.pop()
                for frame in self._functions_named(name):
                    if not never_a_step(frame.name):
                        pending.extend(frame.facts.ungated_calls - called)
                        called |= frame.facts.ungated_calls
            self._every_step_callees = called
        return self._every_step_callees

    def _loops_in(self, function: FunctionFrame | None) -> list[LoopFrame]:
        """The loops written in a function (None: at module level), in order; one index for all the
        questions (again if loops were added since)."""
        if self._loops_indexed != len(self._loops):
            self._loops_by_function = {}
            for loop in self._loops:
                self._loops_by_function.setdefault(id(loop.function), []).append(loop)
            self._loops_indexed = len(self._loops)
        return self._loops_by_function.get(id(function), [])

    def _functions_named(self, name: str) -> list[FunctionFrame]:
        if self._by_name is None or self._named_indexed != len(self._functions):
            self._by_name = {}
            for frame in self._functions:
                self._by_name.setdefault(frame.name, []).append(frame)
            self._named_indexed = len(self._functions)
        return self._by_name.get(name, [])

    def steps_optimizer(self, frame: Union[LoopFrame, FunctionFrame]) -> bool:
        """The loop or function body steps an optimizer itself (`d_optimizer.step()`): each iteration of
        such a loop is a whole update, not a micro-batch of one."""
        return any(self._is_optimizer_step(candidate) for candidate in frame.facts.step_candidates) or self._delegates(
            frame.facts
        )

    def hands_over_update(self, call: cst.Call) -> bool:
        """The call hands a live loss and an optimizer to code the file does not show, which then runs the
        backward pass and the optimizer step: `loss_scaler(loss, optimizer, parameters=model.parameters())`
        (timm/MAE's scaler object, whose `__call__` does `scale(loss).backward()` and `step(optimizer)`),
        `update(loss, opt)` imported from another module. The loss is what a model or a loss function
        returned, not detached or read to the host (`lr_sched.adjust_learning_rate(optimizer, it / n)` and
        `log(loss.item(), optimizer)` hand over no loss, and `make_private(module=model, optimizer=optimizer)`
        wraps a model); a method of the optimizer itself, or a function of the file (its own body says
        what it does), is no hand-over."""
        if self.values is None:
            return False
        func = call.func
        func_type = type(func)  # exact types (see node_fields.node_kinds)
        receiver = dotted_name(func.value) if func_type is cst.Attribute else None
        last = func.attr.value if func_type is cst.Attribute else func.value if func_type is cst.Name else None
        if last is None or (receiver is not None and self._looks_like_optimizer(receiver)):
            return False
        if (func_type is cst.Name or receiver == "self") and self._functions_named(last):
            return False
        arguments = [arg.value for arg in call.args if not arg.star]
        optimizers = [value for value in arguments if self._names_optimizer(dotted_name(value))]
        modules = self.values.modules
        return bool(optimizers) and any(
            is_live_loss(self.values.value_of(value)) and not (modules is not None and modules.is_module(value))
            for value in arguments
            if value not in optimizers
        )

    def _names_optimizer(self, dotted: str | None) -> bool:
        """An optimizer the file builds, or one its spelling names (`optimizer`, `self.g_optim`): the short
        `opt` alone is too little to say an unseen callee steps it (and is no pre-filter token)."""
        return dotted is not None and (
            dotted in self._optimizer_bindings
            or (self._looks_like_optimizer(dotted) and any(token in dotted for token in OPTIMIZER_TOKENS))
        )

    def _delegates(self, facts: PathFacts) -> bool:
        return any(self.hands_over_update(call) for call in facts.handovers)

    def _is_step_by_itself(self, function: FunctionFrame) -> bool:
        """A step function by what it does and how it is named, without looking at its callers."""
        key = id(function)
        if key in self._evident_cache:
            return self._evident_cache[key]
        name = function.name.lstrip("_") or function.name
        facts = function.facts
        backward, stepping = self._update_reached(function)
        step_named = name in words.STEP_FUNCTION_NAMES
        bases = tuple(base.rsplit(".", 1)[-1] for base in (function.owner.bases if function.owner else ()))
        if per_iteration_event_handler(function.node):
            result = True
        elif (words.NEVER_STEP_FUNCTION.match(name) or is_harness(name)) and not step_named:
            result = False
        elif backward and stepping:
            result = True
        elif step_named:
            result = (
                backward
                or stepping
                or any(words.FRAMEWORK_STEP_BASE.search(base) for base in bases)
                or bool({call.lstrip("_") for call in facts.calls} & words.STEP_FUNCTION_NAMES)
                or id(function.node) in self._loss_mentions
            )
        elif name in words.PER_BATCH_HOOKS:
            result = any(words.HOOK_BASE.search(base) for base in bases)
        else:
            # Hugging Face's Trainer calls compute_loss from training_step on every (micro-)batch
            result = name == "compute_loss" and any(base.endswith("Trainer") for base in bases)
        self._evident_cache[key] = result
        return result

    def _update_reached(self, function: FunctionFrame) -> tuple[bool, bool]:
        """(backward pass, optimizer step) that the function runs outside its own loops, itself or through
        functions of the file it calls by name or on `self`: `run_step` calling `self.forward_backward()`
        and then `self.optimize()` runs a whole step although neither helper does."""
        key = id(function)
        if key not in self._reach_cache:
            backward = stepping = False
            seen, pending = {key}, [function]
            while pending and not (backward and stepping):
                frame = pending.pop()
                backward = backward or bool(frame.facts.backward) or self._delegates(frame.facts)
                stepping = stepping or self.steps_optimizer(frame)
                for callee in (f for name in frame.facts.own_calls for f in self._functions_named(name)):
                    if id(callee) not in seen and not never_a_step(callee.name):
                        seen.add(id(callee))
                        pending.append(callee)
            self._reach_cache[key] = (backward, stepping)
        return self._reach_cache[key]

    def _self_evident_step_names(self) -> set[str]:
        if self._evident_names is None:
            self._evident_names = {frame.name for frame in self._functions if self._is_step_by_itself(frame)}
        return self._evident_names

    def _names_called_in_training_loops(self) -> set[str]:
        if self._loop_callees is None:
            self._loop_callees = {
                name for loop in self._loops if self.is_training_loop(loop) for name in loop.facts.calls
            }
        return self._loop_callees

    def _has_update(self, facts: PathFacts) -> bool:
        return bool(facts.backward) or any(self._is_optimizer_step(c) for c in facts.step_candidates) or self._delegates(facts)

    def _is_optimizer_step(self, candidate: StepCall) -> bool:
        return (
            candidate.always
            or self._looks_like_optimizer(candidate.receiver)
            or self._looks_like_optimizer(candidate.first_argument)
        )

    def _looks_like_optimizer(self, dotted: str | None) -> bool:
        if dotted is None:
            return False
        if dotted not in self._optimizer_cache:
            last = dotted.rsplit(".", 1)[-1].lower()
            self._optimizer_cache[dotted] = dotted in self._optimizer_bindings or (
                "sched" not in last and ("optim" in last or bool(re.search(r"(^|_)opt(\d*|_\w*)$", last)))
            )
        return self._optimizer_cache[dotted]
