"""Where a site sits in the per-step training path (the `steps` part's paths, mixed into `StepIndex`):
the innermost training loop or step function around it and the gates in between, a helper every step
calls, the step counter in scope for fixes, and whether a threshold reads memory in use rather than
a user setting.
"""

from __future__ import annotations

from typing import Union

import libcst as cst

from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.training.step_frames import (
    BranchFrame,
    Frame,
    FunctionFrame,
    LoopFrame,
    StepPath,
    best_increment,
    loop_header,
    loop_index,
    parameter_names,
    per_iteration_event_handler,
    target_names,
)
from stabfix.model.source.node_fields import children

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


class StepPaths:
    """The step path of a site, from the frames `StepIndex` records (ask after the traversal)."""

    # recorded by `StepIndex` (see there)
    imports: ImportTracker
    names: Names | None
    _paths: dict[int, tuple[tuple[Frame, ...], StepPath | None]]  # `step_path` answers, by frames tuple

    def step_path(self, frames: tuple[Frame, ...]) -> StepPath | None:
        """The innermost training loop or step function a site with these frames runs in, or None."""
        # the sites under one top frame share their frames tuple (`StepIndex.frames`), and several rules
        # ask of each site: one answer per tuple
        known = self._paths.get(id(frames))
        if known is not None and known[0] is frames:
            return known[1]
        path = self._step_path(frames)
        self._paths[id(frames)] = (frames, path)
        return path

    def _step_path(self, frames: tuple[Frame, ...]) -> StepPath | None:
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
        return type(frame.node) is cst.If and frame.runs_backward

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
            if isinstance(frame, LoopFrame) and type(frame.node) is cst.For:
                if any(name.value == root for name in target_names(frame.node.target)):
                    return None
        return counter

    def _counter(self, path: StepPath) -> str | None:
        scope = path.scope
        if isinstance(scope, LoopFrame):
            target = loop_index(scope.node)
            if target is not None:
                return target
            return best_increment(scope.facts.increments)
        params = parameter_names(scope.node)
        named = [name for name in params if words.STEP_COUNTER_NAME.match(name)]
        if named:
            return named[0]
        if per_iteration_event_handler(scope.node) and params:
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
        if type(expression) is cst.Name:
            if function is None or self.names is None:
                return False
            values = [binding.bound_value for binding in self.names.bindings_of(expression)]
            return any(self.reads_memory(value, function, depth + 1) for value in values if value is not None)
        if type(expression) is cst.Attribute:
            return self.reads_memory(expression.value, function, depth)
        if type(expression) is cst.Call:
            if self._queries_memory(expression.func, depth):
                return True
            func = expression.func
            parts = [func.value] if type(func) is cst.Attribute else []
            return any(self.reads_memory(part, function, depth) for part in [*parts, *(a.value for a in expression.args)])
        return any(
            self.reads_memory(child, function, depth)
            for child in children(expression)
            if isinstance(child, cst.BaseExpression)
            or type(child) in (cst.Arg, cst.SubscriptElement, cst.Index, cst.ComparisonTarget)
        )

    def _queries_memory(self, func: cst.BaseExpression, depth: int) -> bool:
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return qualified in _MEMORY_QUERY_CALLS or qualified.startswith(_MEMORY_QUERY_MODULES)
        name = dotted_name(func) or ""
        last = func.attr.value if type(func) is cst.Attribute else name
        local = (
            [frame for frame in self._functions if frame.name == last]
            if type(func) is cst.Name or name == f"self.{last}"
            else []
        )
        if local:
            return any(
                self.reads_memory(value, frame, depth + 1)
                for frame in local
                for value in (self.names.returns.get(frame.node, []) if self.names is not None else [])
            )
        return bool(last) and bool(words.MEMORY_NAME.search(last))
