"""Which code runs on every training step: training loops, step functions, and the gates in between.

A *training loop* is a `for`/`while` loop whose own body (not a nested loop's) performs a parameter
update — `loss.backward()`, `accelerator.backward(loss)`, `optimizer.step()`, `scaler.step(opt)`,
or a live loss handed with an optimizer to code the file does not show (`loss_scaler(loss, optimizer)`,
see `hands_over_update`) — or calls a step function of the file or a method named like one
(`trainer.train_step(batch)`). An epoch loop whose updates all sit in an inner batch loop is not one,
nor are the phases of a benchmark around a step loop, nor a loop that only calls a helper running a
backward pass (a benchmark over configurations).

A *step function* runs once per step because of what it does, with its name as supporting evidence:
- it calls both backward and an optimizer step outside any loop of its own, itself or through functions
  of the file it calls (`run_step` calling `self.forward_backward()` and `self.optimize()`);
- it does one of them and is named like a step (`train_step`, `training_step`, `fit_batch`...), or
  is called from a training loop of the file (`grpo_step(batch)` runs backward, the loop steps);
- it is named like a step and computes a loss, overrides a framework's step (its class derives from
  a `LightningModule` or a `Trainer`), or calls another step (`super().training_step(...)`);
- it is a framework's per-batch hook (`on_train_batch_end`, `on_step_end`, `on_after_backward`...)
  of a class deriving from a callback/hook/LightningModule base, `compute_loss` of a class
  deriving from a (Hugging Face) `Trainer`, or an ignite handler registered with
  `@engine.on(Events.ITERATION_COMPLETED)`.
Teardown, evaluation and generation functions (`__del__`, `cleanup`, `on_train_end`, `evaluate`...)
never are, and test/benchmark/check harnesses (`test_*`, `check_*`, `bench*`...) hold no training
loops.

A *gate* is anything that makes a statement run on only some steps: an `if`/`elif`/`else`/`match`
branch, except device-availability checks (`if torch.cuda.is_available():`) and branches that run
the backward pass themselves (`if training:`); an `except` handler; a loop's `else`; or an earlier
`if <interval test>: continue` in the same body (see `model.gates.skipped_by_interval_guard`).

The index is the model's `steps` part (a checker declares `needs = ("steps",)`; it reads the `names`
part for what a local holds): it rides in the engine's single traversal, a checker snapshots
`frames()` (training structure) and `place()` (enclosing statements and blocks, see `model.places`)
at the sites it cares about, and asks `step_path(frames)` once the module has been visited.
`counter(path)` names a step counter in scope for fixes; `model.gates` compares the gates of two paths.
What the index needs from a subtree (a backward pass in a branch, a loss in a function) is recorded
on the way down, never found by walking the subtree again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from stabfix.model import vocabulary as words
from stabfix.model.traversal import children, visit_readonly
from stabfix.model.enclosing import EnclosingDefinitions
from stabfix.model.imports import ImportTracker, dotted_name
from stabfix.model.names import Names
from stabfix.model.places import Place
from stabfix.model.values import Value, Values

# --- memory readings (what a threshold can be compared against besides a user setting) ----------

DEVICE_MODULES = ("cuda", "cuda.memory", "mps", "xpu", "npu", "mlu", "musa", "accelerator", "accelerator.memory")
# How much device memory is in use, however it is asked: `memory_allocated() > 8 GiB` and
# `memory_reserved() > 12 GiB` are the same kind of threshold and are true on the same high-memory steps.
MEMORY_IN_USE_CALLS = frozenset(
    f"torch.{module}.{name}"
    for module in DEVICE_MODULES
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved")
)
_MEMORY_QUERY_CALLS = MEMORY_IN_USE_CALLS | {
    f"torch.{module}.{name}"
    for module in DEVICE_MODULES
    for name in ("mem_get_info", "memory_stats", "memory_usage", "current_allocated_memory", "driver_allocated_memory")
}
_MEMORY_QUERY_MODULES = ("psutil.", "pynvml.", "nvidia_smi.", "GPUtil.")


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


# --- frames -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StepCall:
    """A call that steps something: `optimizer.step()`, `scaler.step(opt)`, `xm.optimizer_step(opt)`."""

    receiver: str | None  # dotted receiver of `.step`
    first_argument: str | None  # dotted first positional argument
    always: bool = False  # an explicit optimizer step (`optimizer_step`)


@dataclass(eq=False)
class PathFacts:
    """What one function or loop body does itself (outside nested loops and functions)."""

    backward: list[cst.Call] = field(default_factory=list)
    step_candidates: list[_StepCall] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)  # last identifiers of called functions/methods
    own_calls: set[str] = field(default_factory=set)  # of `calls`, those by a plain name or on `self`
    increments: list[tuple[str, bool]] = field(default_factory=list)  # (dotted target, ungated)
    ungated_calls: set[str] = field(default_factory=set)  # of `calls`, those made behind no gate
    bound: set[str] = field(default_factory=set)  # names assigned here (`x = ...`)
    builds_optimizer: bool = False  # an optimizer is constructed here
    handovers: list[cst.Call] = field(default_factory=list)  # calls given two or more arguments (`hands_over_update`)


@dataclass(eq=False)
class ClassFrame:
    node: cst.ClassDef
    bases: tuple[str, ...]
    self_increments: set[str] = field(default_factory=set)  # "self.global_step"


@dataclass(eq=False)
class FunctionFrame:
    node: cst.FunctionDef
    owner: ClassFrame | None  # the class this function is a method of
    facts: PathFacts = field(default_factory=PathFacts)

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(eq=False)
class LoopFrame:
    node: Union[cst.For, cst.While]
    function: FunctionFrame | None  # the function the loop is written in
    facts: PathFacts = field(default_factory=PathFacts)
    enclosing: LoopFrame | None = None  # the loop around it in the same function


@dataclass(eq=False)
class BranchFrame:
    """A place reached on some executions only, unless it is a device-availability check."""

    node: cst.CSTNode  # If, IfExp, MatchCase, ExceptHandler, For/While (their else)
    kind: str  # "if", "else", "case", "except", "loop-else"
    gate: bool
    runs_backward: bool = False  # a backward pass is called in the branch (nested functions aside)


@dataclass(eq=False)
class OpaqueFrame:
    """A lambda or class body: what runs there is not part of the enclosing step."""

    node: cst.CSTNode


Frame = Union[ClassFrame, FunctionFrame, LoopFrame, BranchFrame, OpaqueFrame]


@dataclass(frozen=True)
class StepPath:
    """Where a site sits in the per-step training path."""

    scope: Union[LoopFrame, FunctionFrame]  # the innermost training loop or step function around the site
    gates: tuple[BranchFrame, ...]  # gates between the site and the scope (innermost first)
    frames: tuple[Frame, ...]  # the site's frames, outermost first
    # "step": a training loop or step function; "update": an update loop (`is_update_loop`), one
    # iteration of which is one step; "callee": a function of the file a step calls every time
    kind: str = "step"

    @property
    def every_step(self) -> bool:
        return not self.gates

    def between(self) -> tuple[Frame, ...]:
        """Frames strictly inside the scope, outermost first."""
        index = next(i for i, frame in enumerate(self.frames) if frame is self.scope)
        return self.frames[index + 1 :]


# --- the index ----------------------------------------------------------------------------------


class StepIndex(cst.BatchableCSTVisitor):
    """Collects loops, functions and gates in the main traversal; answers per-step questions after it."""

    def __init__(
        self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Names | None = None, values: Values | None = None
    ) -> None:
        super().__init__()
        self.imports = imports
        self.enclosing = enclosing
        self.names = names  # the binding model, for what a local holds (`reads_memory`)
        self.values = values  # what an argument is: a live loss handed over with the optimizer (`hands_over_update`)
        self._place: list[cst.CSTNode] = []
        self._loss_mentions: set[int] = set()  # ids of functions that mention a loss (own code only)
        self._stack: list[Frame] = []
        self._functions: list[FunctionFrame] = []
        self._loops: list[LoopFrame] = []
        self._optimizer_bindings: set[str] = set()
        self._step_cache: dict[int, bool] = {}
        self._training_cache: dict[int, bool] = {}
        self._optimizer_cache: dict[str, bool] = {}
        self._evident_cache: dict[int, bool] = {}
        self._evident_names: set[str] | None = None
        self._loop_callees: set[str] | None = None
        self._every_step_callees: set[str] | None = None
        self._update_cache: dict[int, bool] = {}
        self._by_name: dict[str, list[FunctionFrame]] | None = None
        self._loops_by_function: dict[int, list[LoopFrame]] = {}
        self._loops_indexed = -1
        self._named_indexed = -1
        self._reach_cache: dict[int, tuple[bool, bool]] = {}

    # -- public queries ---------------------------------------------------------------------
    def frames(self) -> tuple[Frame, ...]:
        """The frames around the node being visited, outermost first."""
        return tuple(self._stack)

    def place(self) -> Place:
        """The statements and blocks around the node being visited, outermost first (see `Place`)."""
        return tuple(self._place)

    def step_path(self, frames: tuple[Frame, ...]) -> StepPath | None:
        """The innermost training loop or step function a site with these frames runs in, or None."""
        gates: list[BranchFrame] = []
        for frame in reversed(frames):
            if isinstance(frame, BranchFrame):
                if frame.gate and not self._branch_does_backward(frame):
                    gates.append(frame)
            elif isinstance(frame, LoopFrame):
                if self.is_training_loop(frame):
                    return StepPath(frame, tuple(gates), frames)
                if self.is_update_loop(frame):
                    return StepPath(frame, tuple(gates), frames, "update")
            elif isinstance(frame, FunctionFrame):
                if self.is_step_function(frame):
                    return StepPath(frame, tuple(gates), frames)
                if self.is_called_every_step(frame):
                    return StepPath(frame, tuple(gates), frames, "callee")
                return None
            else:
                return None
        return None

    def in_training(self, frames: tuple[Frame, ...]) -> bool:
        """Whether a site runs as part of training: on a step path (see `step_path`), or inside a
        function that a training loop of the file calls (a helper of the step)."""
        if self.step_path(frames) is not None:
            return True
        called = self._names_called_in_training_loops()
        return any(isinstance(frame, FunctionFrame) and frame.name in called for frame in frames)

    def _branch_does_backward(self, frame: BranchFrame) -> bool:
        """`if training: loss.backward(); ...` is a mode switch, not a gate: the branch runs on every step."""
        return isinstance(frame.node, cst.If) and frame.runs_backward

    def is_training_loop(self, loop: LoopFrame) -> bool:
        key = id(loop)
        if key not in self._training_cache:
            facts = loop.facts
            called = {name.lstrip("_") for name in facts.calls}
            self._training_cache[key] = not (loop.function is not None and _is_harness(loop.function.name)) and (
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
                and not _is_harness(function.name)
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
                not (loop.function is not None and _is_harness(loop.function.name))
                and not self.is_training_loop(loop)
                and _draws_per_iteration(loop, self.names)
                and (
                    # a loop nested in this one is written in its function
                    any(self._repeats_over_iteration(inner, loop, set()) for inner in self._loops_in(loop.function))
                    or any(
                        self._repeats_over_iteration(inner, None, function.facts.bound)
                        for name in loop.facts.calls
                        for function in self._functions_named(name)
                        if not _is_harness(function.name)
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
            if isinstance(loop.node, cst.For):
                names.update(name.value for name in target_names(loop.node.target))
        if outer is not None:
            if outer.facts.builds_optimizer:
                return False  # a fresh optimizer each iteration: a fold, trial or client run, not a step
            names |= outer.facts.bound
        return all(
            "next" not in loop.facts.calls and not loop.facts.builds_optimizer and _iterates_over(loop.node, names)
            for loop in chain
        )

    def is_called_every_step(self, function: FunctionFrame) -> bool:
        """A function of the file that a training loop or step function calls behind no gate, or that such a
        function calls behind no gate (`run_step` -> `optimize()` -> `_grad_norm()`): it runs every step."""
        return not _never_a_step(function.name) and function.name in self._called_every_step()

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
                    if not _never_a_step(frame.name):
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
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last is None or (receiver is not None and self._looks_like_optimizer(receiver)):
            return False
        if (isinstance(func, cst.Name) or receiver == "self") and self._functions_named(last):
            return False
        arguments = [arg.value for arg in call.args if not arg.star]
        optimizers = [value for value in arguments if self._names_optimizer(dotted_name(value))]
        modules = self.values.modules
        return bool(optimizers) and any(
            _is_live_loss(self.values.value_of(value)) and not (modules is not None and modules.is_module(value))
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

    def helper_path(self, frames: tuple[Frame, ...]) -> StepPath | None:
        """Like `step_path`, and also for a helper of the file that a training loop or step function
        calls behind no gate although its name reads like a check (`check_tensor_health(x)` called
        from `train_step`): what matters is that the step calls it, not what it is named."""
        path = self.step_path(frames)
        if path is not None:
            return path
        gates: list[BranchFrame] = []
        for frame in reversed(frames):
            if isinstance(frame, BranchFrame):
                if frame.gate and not self._branch_does_backward(frame):
                    gates.append(frame)
            elif isinstance(frame, FunctionFrame):
                name = frame.name
                called = name in self._called_every_step()
                if called and not words.NEVER_STEP_FUNCTION.match(name.lstrip("_") or name):
                    return StepPath(frame, tuple(gates), frames, "callee")
                return None
            elif not isinstance(frame, LoopFrame):
                return None
        return None

    def counter(self, path: StepPath) -> str | None:
        """An integer expression that counts steps at the site (`step`, `self.global_step`), if any: not
        one whose name an inner loop between the scope and the site reuses (`for i in range(3):` inside
        `for i, batch in enumerate(loader):` would make `i % 100` wrong)."""
        counter = self._counter(path)
        if counter is None:
            return None
        root = counter.split(".", 1)[0]
        for frame in path.between():
            if isinstance(frame, LoopFrame) and isinstance(frame.node, cst.For):
                if any(name.value == root for name in target_names(frame.node.target)):
                    return None
        return counter

    def _counter(self, path: StepPath) -> str | None:
        scope = path.scope
        if isinstance(scope, LoopFrame):
            target = _loop_index(scope.node)
            if target is not None:
                return target
            return _best_increment(scope.facts.increments)
        params = _parameter_names(scope.node)
        named = [name for name in params if words.STEP_COUNTER_NAME.match(name)]
        if named:
            return named[0]
        if _per_iteration_event_handler(scope.node) and params:
            return f"{params[0]}.state.iteration"  # ignite: the handler receives the engine
        owner = scope.owner
        if owner is not None:
            last_bases = {base.rsplit(".", 1)[-1] for base in owner.bases}
            if any(base.endswith("LightningModule") for base in last_bases) and "self" in params:
                return "self.global_step"
            counters = sorted(
                (attr for attr in owner.self_increments if words.STEP_COUNTER_ATTRIBUTE.search(attr)),
                key=lambda attr: (not attr.endswith("global_step"), "step" not in attr, attr),
            )
            if counters and "self" in params:
                return counters[0]
            if scope.name in words.PER_BATCH_HOOKS:
                if "state" in params:
                    return "state.global_step"
                if "trainer" in params:
                    return "trainer.global_step"
            if any(base.endswith("Trainer") for base in last_bases) and "self" in params:
                return "self.state.global_step"
        return None

    def describe(self, scope: Union[LoopFrame, FunctionFrame]) -> str:
        """`the training loop `for step, batch in enumerate(loader)`` / `the step function `train_step()``."""
        if isinstance(scope, FunctionFrame):
            return f"the per-step function `{scope.name}()`"
        return f"the training loop `{loop_header(scope.node)}`"

    def reads_memory(self, expression: cst.BaseExpression, function: FunctionFrame | None, depth: int = 0) -> bool:
        """The expression is (computed from) a reading of how much memory is in use, not a user setting.

        `torch.cuda.memory_reserved() / 2**30`, a local bound to such a reading (`gb = ...; if gb > 20:`),
        a call of a function of this file that returns one, `psutil.virtual_memory().percent`. A config or
        args attribute, a parameter or a constant is a setting: `args.level >= 1` and `args.level >= 2`
        pick different runs, while `mem > 8` and `mem > 12` both pick the high-memory steps. A call the
        file can neither resolve nor find defined (`self.memory_gb()`) counts when its name speaks of memory.
        """
        if depth > 4:
            return False
        if isinstance(expression, cst.Name):
            if function is None or self.names is None:
                return False
            values = [binding.bound_value for binding in self.names.bindings_of(expression)]
            return any(self.reads_memory(value, function, depth + 1) for value in values if value is not None)
        if isinstance(expression, cst.Attribute):
            return self.reads_memory(expression.value, function, depth)
        if isinstance(expression, cst.Call):
            if self._queries_memory(expression.func, depth):
                return True
            func = expression.func
            parts = [func.value] if isinstance(func, cst.Attribute) else []
            return any(self.reads_memory(part, function, depth) for part in [*parts, *(a.value for a in expression.args)])
        return any(
            self.reads_memory(child, function, depth)
            for child in children(expression)
            if isinstance(child, cst.BaseExpression)
            or isinstance(child, (cst.Arg, cst.SubscriptElement, cst.Index, cst.ComparisonTarget))
        )

    def _queries_memory(self, func: cst.BaseExpression, depth: int) -> bool:
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return qualified in _MEMORY_QUERY_CALLS or qualified.startswith(_MEMORY_QUERY_MODULES)
        name = dotted_name(func) or ""
        last = func.attr.value if isinstance(func, cst.Attribute) else name
        local = (
            [frame for frame in self._functions if frame.name == last]
            if isinstance(func, cst.Name) or name == f"self.{last}"
            else []
        )
        if local:
            return any(
                self.reads_memory(value, frame, depth + 1)
                for frame in local
                for value in (self.names.returns.get(frame.node, []) if self.names is not None else [])
            )
        return bool(last) and bool(words.MEMORY_NAME.search(last))

    # -- traversal: frames --------------------------------------------------------------------
    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        bases = tuple(self._name_of(arg.value) or "" for arg in node.bases)
        self._stack.append(ClassFrame(node, bases))

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        owner = self._stack[-1] if self._stack and isinstance(self._stack[-1], ClassFrame) else None
        frame = FunctionFrame(node, owner)
        self._functions.append(frame)
        self._stack.append(frame)

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda_body(self, node: cst.Lambda) -> None:
        self._stack.append(OpaqueFrame(node))

    def leave_Lambda_body(self, node: cst.Lambda) -> None:
        self._stack.pop()

    def visit_For_body(self, node: cst.For) -> None:
        self._push_loop(node)

    def leave_For_body(self, node: cst.For) -> None:
        self._stack.pop()

    def visit_While_body(self, node: cst.While) -> None:
        self._push_loop(node)

    def leave_While_body(self, node: cst.While) -> None:
        self._stack.pop()

    def visit_For_orelse(self, node: cst.For) -> None:
        self._stack.append(BranchFrame(node, "loop-else", True))

    def leave_For_orelse(self, node: cst.For) -> None:
        self._stack.pop()

    def visit_While_orelse(self, node: cst.While) -> None:
        self._stack.append(BranchFrame(node, "loop-else", True))

    def leave_While_orelse(self, node: cst.While) -> None:
        self._stack.pop()

    def visit_If_body(self, node: cst.If) -> None:
        self._stack.append(BranchFrame(node, "if", not self.is_device_check(node.test)))

    def leave_If_body(self, node: cst.If) -> None:
        self._stack.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self._stack.append(BranchFrame(node, "else", not self.is_device_check(node.test)))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._stack.pop()

    def visit_IfExp_body(self, node: cst.IfExp) -> None:
        self._stack.append(BranchFrame(node, "if", not self.is_device_check(node.test)))

    def leave_IfExp_body(self, node: cst.IfExp) -> None:
        self._stack.pop()

    def visit_IfExp_orelse(self, node: cst.IfExp) -> None:
        self._stack.append(BranchFrame(node, "else", not self.is_device_check(node.test)))

    def leave_IfExp_orelse(self, node: cst.IfExp) -> None:
        self._stack.pop()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._stack.append(BranchFrame(node, "except", True))

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._stack.pop()

    def visit_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._stack.append(BranchFrame(node, "except", True))

    def leave_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._stack.pop()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._stack.append(BranchFrame(node, "case", True))

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._stack.pop()

    def _push_loop(self, node: Union[cst.For, cst.While]) -> None:
        function = next((f for f in reversed(self._stack) if isinstance(f, FunctionFrame)), None)
        enclosing = self._innermost_body()
        frame = LoopFrame(node, function, enclosing=enclosing if isinstance(enclosing, LoopFrame) else None)
        self._loops.append(frame)
        self._stack.append(frame)

    # -- traversal: places --------------------------------------------------------------------------
    def _enter_place(self, node: cst.CSTNode) -> None:
        self._place.append(node)

    def _leave_place(self, node: cst.CSTNode) -> None:
        self._place.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._place.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._place.pop()

    # -- traversal: facts -----------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if "loss" in node.value.lower():
            function = self.enclosing.innermost_function()
            if function is not None:
                self._loss_mentions.add(id(function))  # its own code, nested functions apart

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("backward", "manual_backward"):
            for frame in reversed(self._stack):
                if isinstance(frame, FunctionFrame):
                    break
                if isinstance(frame, BranchFrame):
                    frame.runs_backward = True
        body = self._innermost_body()
        if body is None:
            return
        facts = body.facts
        func = node.func
        last = (
            func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        )
        if last is None:
            return
        facts.calls.add(last)
        if isinstance(func, cst.Name) or (isinstance(func.value, cst.Name) and func.value.value == "self"):
            facts.own_calls.add(last)
        if not any(
            isinstance(frame, BranchFrame) and frame.gate for frame in self._stack[self._stack.index(body) + 1 :]
        ):
            facts.ungated_calls.add(last)
        if last in ("backward", "manual_backward") and isinstance(func, cst.Attribute):
            facts.backward.append(node)
        elif last == "optimizer_step":
            facts.step_candidates.append(_StepCall(None, None, always=True))
        elif self.imports.qualify(func) == "torch.autograd.backward":
            facts.backward.append(node)
        elif last == "step" and isinstance(func, cst.Attribute):
            receiver = dotted_name(func.value)
            first = next((arg.value for arg in node.args if arg.keyword is None), None)
            facts.step_candidates.append(_StepCall(receiver, dotted_name(first) if first is not None else None))
        elif len(node.args) >= 2:
            facts.handovers.append(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not (
            isinstance(node.operator, cst.AddAssign) and isinstance(node.value, cst.Integer) and node.value.value == "1"
        ):
            return
        target = dotted_name(node.target)
        if target is None:
            return
        body = self._innermost_body()
        if isinstance(body, LoopFrame):
            ungated = not any(
                isinstance(frame, BranchFrame) and frame.gate for frame in self._stack[self._stack.index(body) + 1 :]
            )
            body.facts.increments.append((target, ungated))
        function = next((f for f in reversed(self._stack) if isinstance(f, FunctionFrame)), None)
        if function is not None and function.owner is not None and target.startswith("self."):
            function.owner.self_increments.add(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        body = self._innermost_body()
        if body is not None:
            for target in node.targets:
                body.facts.bound.update(name.value for name in target_names(target.target))
        value = node.value
        if not isinstance(value, cst.Call):
            return
        constructor = self._name_of(value.func) or ""
        if not _constructs_optimizer(constructor):
            return
        if body is not None:
            body.facts.builds_optimizer = True
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None:
                self._optimizer_bindings.add(name)

    # -- conditions -----------------------------------------------------------------------------
    def is_device_check(self, test: cst.BaseExpression) -> bool:
        """True for tests that only ask which device we run on: they do not make a call run less often."""
        if isinstance(test, cst.BooleanOperation):
            return self.is_device_check(test.left) and self.is_device_check(test.right)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.is_device_check(test.expression)
        if isinstance(test, cst.Call):
            name = self._name_of(test.func) or ""
            last = name.rsplit(".", 1)[-1]
            if last in ("is_available", "is_initialized") and name.startswith("torch."):
                return True
            if words.DEVICE_AVAILABLE_FUNCTION.match(last):
                return True
            if last == "hasattr" and test.args and (self._name_of(test.args[0].value) or "").startswith("torch"):
                return True
            return False
        if isinstance(test, cst.Comparison):
            operands = [test.left, *(target.comparator for target in test.comparisons)]
            if any(_is_device_string(operand) for operand in operands):
                return True
            return any(
                isinstance(op, cst.Call) and (self._name_of(op.func) or "").endswith("device_count") for op in operands
            )
        if isinstance(test, (cst.Name, cst.Attribute)):
            last = test.value if isinstance(test, cst.Name) else test.attr.value
            return bool(words.DEVICE_FLAG_NAME.match(last.lower()))
        return False

    def is_interval_test(self, test: cst.BaseExpression) -> bool:
        """A test that fires on some steps only: a modulo (`step % 100`) or an interval-like name (`log_every`)."""
        found = False

        class _Finder(cst.CSTVisitor):
            def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
                nonlocal found
                if isinstance(node.operator, cst.Modulo):
                    found = True

            def visit_Name(self, node: cst.Name) -> None:
                nonlocal found
                if words.INTERVAL_NAME.search(node.value):
                    found = True

        visit_readonly(test, _Finder())
        return found

    # -- deciding --------------------------------------------------------------------------------
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
        if _per_iteration_event_handler(function.node):
            result = True
        elif (words.NEVER_STEP_FUNCTION.match(name) or _is_harness(name)) and not step_named:
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
                    if id(callee) not in seen and not _never_a_step(callee.name):
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

    def _is_optimizer_step(self, candidate: _StepCall) -> bool:
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

    def _innermost_body(self) -> Union[FunctionFrame, LoopFrame, None]:
        for frame in reversed(self._stack):
            if isinstance(frame, (FunctionFrame, LoopFrame)):
                return frame
            if isinstance(frame, (ClassFrame, OpaqueFrame)):
                return None
        return None

    def _name_of(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualify(node) or dotted_name(node)


# Each statement and block type enters the place stack on the way down and leaves it on the way up
# (libcst finds visitor methods by their name, so every type gets its own pair).
_PLACE_NODES = (
    "Module", "IndentedBlock", "SimpleStatementSuite", "SimpleStatementLine", "Else", "Finally", "ExceptHandler",
    "ExceptStarHandler", "MatchCase", "If", "For", "While", "With", "Try", "TryStar", "ClassDef", "Match",
)
for _kind in _PLACE_NODES:
    setattr(StepIndex, f"visit_{_kind}", StepIndex._enter_place)
    setattr(StepIndex, f"leave_{_kind}", StepIndex._leave_place)


# --- small helpers ------------------------------------------------------------------------------


def loop_header(node: Union[cst.For, cst.While]) -> str:
    code = cst.Module(body=[])
    if isinstance(node, cst.For):
        text = f"for {code.code_for_node(node.target)} in {code.code_for_node(node.iter)}"
    else:
        text = f"while {code.code_for_node(node.test)}"
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


def _loop_index(node: Union[cst.For, cst.While]) -> str | None:
    """`step` in `for step, batch in enumerate(loader)` / `for step in range(n)` (also through tqdm)."""
    if not isinstance(node, cst.For):
        return None
    iterable = node.iter
    for _ in range(3):
        if not isinstance(iterable, cst.Call):
            return None
        func = dotted_name(iterable.func) or ""
        last = func.rsplit(".", 1)[-1]
        if last == "enumerate":
            target = node.target
            if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
                first = target.elements[0].value
                return first.value if isinstance(first, cst.Name) and first.value != "_" else None
            return None
        if last in ("range", "trange"):
            positional = [arg for arg in iterable.args if arg.keyword is None]
            if len(positional) > 2 or not isinstance(node.target, cst.Name) or node.target.value == "_":
                return None
            return node.target.value
        # a progress-bar wrapper: tqdm(enumerate(loader)), track(range(n))
        if not iterable.args:
            return None
        iterable = iterable.args[0].value
    return None


def _best_increment(increments: list[tuple[str, bool]]) -> str | None:
    named = [target for target, _ in increments if words.STEP_COUNTER_ATTRIBUTE.search(target.rsplit(".", 1)[-1])]
    if named:
        return named[0]
    ungated = [target for target, every in increments if every]
    return ungated[0] if ungated else None


def _parameter_names(node: cst.FunctionDef) -> list[str]:
    params = node.params
    return [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]


def _is_live_loss(value: Value) -> bool:
    """A loss or a model's output that still carries its autograd graph."""
    return (value.reduced or value.model_output) and not (
        value.host or value.not_tensor or value.detached or value.snapshot or value.parameter or value.metadata
    )


def _constructs_optimizer(name: str) -> bool:
    if name.startswith("torch.optim.") and ".lr_scheduler" not in name and ".swa_utils" not in name:
        return True
    last = name.rsplit(".", 1)[-1]
    return last.endswith("optimizers") or last.endswith("Optimizer")


def _is_device_string(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return isinstance(text, str) and text.split(":")[0].lower() in words.DEVICE_STRINGS
    return False


def _per_iteration_event_handler(node: cst.FunctionDef) -> bool:
    """`@trainer.on(Events.ITERATION_COMPLETED)` (ignite): runs after every iteration.
    `Events.ITERATION_COMPLETED(every=100)` is a call, and so an interval, not every iteration."""
    for decorator in node.decorators:
        call = decorator.decorator
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "on"):
            continue
        for arg in call.args:
            event = dotted_name(arg.value) or ""
            if event.rsplit(".", 1)[-1] in ("ITERATION_COMPLETED", "ITERATION_STARTED"):
                return True
    return False


def _is_harness(name: str) -> bool:
    return bool(words.HARNESS_FUNCTION.match(name))


def _never_a_step(name: str) -> bool:
    """Teardown, evaluation, generation, or a test/benchmark harness."""
    return _is_harness(name) or bool(words.NEVER_STEP_FUNCTION.match(name.lstrip("_") or name))




_COUNTERS = {"range", "trange", "count", "repeat"}
_ITERATION_WRAPPERS = {"enumerate", "tqdm", "track", "reversed", "list", "tuple", "iter", "zip", "sorted"}


def _iterated(node: Union[cst.For, cst.While]) -> cst.BaseExpression | None:
    """What a `for` loop iterates, through `enumerate(...)`, progress bars and `zip(...)` (first argument)."""
    if not isinstance(node, cst.For):
        return None
    iterable = node.iter
    for _ in range(4):
        if not (isinstance(iterable, cst.Call) and iterable.args):
            break
        last = (dotted_name(iterable.func) or "").rsplit(".", 1)[-1]
        if last not in _ITERATION_WRAPPERS:
            break
        iterable = iterable.args[0].value
    return iterable


def _is_counter(iterable: cst.BaseExpression) -> bool:
    return isinstance(iterable, cst.Call) and (dotted_name(iterable.func) or "").rsplit(".", 1)[-1] in _COUNTERS


def _draws_per_iteration(loop: LoopFrame, names: Names | None) -> bool:
    """Each iteration takes new data: the loop calls `next()`, or iterates something other than a counter
    or constants written in the code (`enumerate([10, 20])`: the phases of a run, warm-up then timed)."""
    iterable = _iterated(loop.node)
    if "next" in loop.facts.calls:
        return True
    if isinstance(iterable, cst.Name) and names is not None:
        iterable = names.single_value(iterable) or iterable
    return iterable is not None and not _is_counter(iterable) and not _is_constant(iterable)


def _is_constant(node: cst.BaseExpression) -> bool:
    """A number, a string, or a list/tuple/set display of them."""
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(not isinstance(e, cst.StarredElement) and _is_constant(e.value) for e in node.elements)
    if isinstance(node, cst.UnaryOperation):
        return _is_constant(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))


def _iterates_over(node: Union[cst.For, cst.While], names: set[str]) -> bool:
    """The loop repeats a number of times, or iterates data named by one of `names`."""
    iterable = _iterated(node)
    if iterable is None:
        return False
    if _is_counter(iterable):
        return True
    root = iterable
    while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
        root = root.value if not isinstance(root, cst.Call) else root.func
    return isinstance(root, cst.Name) and root.value in names


def target_names(target: cst.BaseExpression):
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)
