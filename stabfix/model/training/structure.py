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

This module records the frames in the traversal (`StepIndex`); the frames themselves are in
`step_frames.py`, which loops train and which functions are steps in `step_recognition.py`
(`StepRecognition`, with the pre-filter `STEP_TOKENS`), and a site's step path, counters and memory
readings in `step_paths.py` (`StepPaths`). `StepIndex` inherits both, so the rules ask one object.
"""
from __future__ import annotations

from typing import Union

import libcst as cst

from stabfix.model.source import vocabulary as words
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.scopes import method_receiver
from stabfix.model.source.places import Place
from stabfix.model.training.step_frames import (
    BranchFrame,
    ClassFrame,
    Frame,
    FunctionFrame,
    LoopFrame,
    OpaqueFrame,
    StepCall,
    constructs_optimizer,
    is_device_string,
    target_names,
)
from stabfix.model.flow.values import Values
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.training.step_paths import StepPaths
from stabfix.model.training.step_recognition import StepRecognition


class StepIndex(StepPaths, StepRecognition, cst.BatchableCSTVisitor):
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
        self._place_snapshot: Place | None = None  # `place()` until the place changes
        self._frames: tuple[Frame, ...] = ()  # `frames()` of the current top frame
        self._paths = {}
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
        self._receivers: dict[tuple[int, int], str] = {}  # (class, innermost function) ids -> `_receiver()`
        self._body_at: tuple[Frame | None, Union[FunctionFrame, LoopFrame, None], bool] | None = None  # see `_body_and_gated`

    # -- public queries ---------------------------------------------------------------------
    def frames(self) -> tuple[Frame, ...]:
        """The frames around the node being visited, outermost first (one tuple shared by every site under
        the same top frame: the frames under a frame never change while it is there)."""
        frames = self._frames
        if len(frames) != len(self._stack) or (frames and frames[-1] is not self._stack[-1]):
            frames = self._frames = tuple(self._stack)
        return frames

    def place(self) -> Place:
        """The statements and blocks around the node being visited, outermost first (see `Place`; one tuple
        shared by the sites of one statement, until the place changes)."""
        place = self._place_snapshot
        if place is None:
            place = self._place_snapshot = tuple(self._place)
        return place

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
        self._place_snapshot = None

    def _leave_place(self, node: cst.CSTNode) -> None:
        self._place.pop()
        self._place_snapshot = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._place.append(node)
        self._place_snapshot = None

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._place.pop()
        self._place_snapshot = None

    # -- traversal: facts -----------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if "loss" in node.value.lower():
            function = self.enclosing.innermost_function()
            if function is not None:
                self._loss_mentions.add(id(function))  # its own code, nested functions apart

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        # exact types (libcst has no subclass of them): every call of the file comes here, and a failing
        # `isinstance` on a libcst class goes through `ABCMeta.__instancecheck__`
        on_attribute, on_name = type(func) is cst.Attribute, type(func) is cst.Name
        if on_attribute and func.attr.value in ("backward", "manual_backward"):  # type: ignore[attr-defined]
            for frame in reversed(self._stack):
                if isinstance(frame, FunctionFrame):
                    break
                if isinstance(frame, BranchFrame):
                    frame.runs_backward = True
        body, gated = self._body_and_gated()
        if body is None:
            return
        facts = body.facts
        last = func.attr.value if on_attribute else func.value if on_name else None  # type: ignore[attr-defined]
        if last is None:
            return
        facts.calls.add(last)
        if on_name or (type(func.value) is cst.Name and func.value.value == self._receiver()):  # type: ignore[attr-defined]
            # `self.helper()`, any receiver name
            facts.own_calls.add(last)
        if not gated:
            facts.ungated_calls.add(last)
        if last in ("backward", "manual_backward") and on_attribute:
            facts.backward.append(node)
        elif last == "optimizer_step":
            facts.step_candidates.append(StepCall(None, None, always=True))
        elif on_name and self.imports.qualify(func) == "torch.autograd.backward":
            # (an attribute chain qualifies to a name ending in its own attribute: `.backward` is handled above)
            facts.backward.append(node)
        elif last == "step" and on_attribute:
            receiver = dotted_name(func.value)  # type: ignore[attr-defined]
            first = next((arg.value for arg in node.args if arg.keyword is None), None)
            facts.step_candidates.append(StepCall(receiver, dotted_name(first) if first is not None else None))
        elif len(node.args) >= 2:
            facts.handovers.append(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not (
            type(node.operator) is cst.AddAssign and type(node.value) is cst.Integer and node.value.value == "1"
        ):
            return
        target = dotted_name(node.target)
        if target is None:
            return
        body, gated = self._body_and_gated()
        if isinstance(body, LoopFrame):
            body.facts.increments.append((target, not gated))
        function = next((f for f in reversed(self._stack) if isinstance(f, FunctionFrame)), None)
        if function is not None and function.owner is not None and target.startswith("self."):
            function.owner.self_increments.add(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        body = self._body_and_gated()[0]
        if body is not None:
            for target in node.targets:
                body.facts.bound.update(name.value for name in target_names(target.target))
        value = node.value
        if type(value) is not cst.Call:  # exact types (see node_fields.node_kinds)
            return
        constructor = self._name_of(value.func) or ""
        if not constructs_optimizer(constructor):
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
        kind = type(test)  # exact types (see node_fields.node_kinds)
        if kind is cst.BooleanOperation:
            return self.is_device_check(test.left) and self.is_device_check(test.right)
        if kind is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self.is_device_check(test.expression)
        if kind is cst.Call:
            name = self._name_of(test.func) or ""
            last = name.rsplit(".", 1)[-1]
            if last in ("is_available", "is_initialized") and name.startswith("torch."):
                return True
            if words.DEVICE_AVAILABLE_FUNCTION.match(last):
                return True
            if last == "hasattr" and test.args and (self._name_of(test.args[0].value) or "").startswith("torch"):
                return True
            return False
        if kind is cst.Comparison:
            operands = [test.left, *(target.comparator for target in test.comparisons)]
            if any(is_device_string(operand) for operand in operands):
                return True
            return any(
                type(op) is cst.Call and (self._name_of(op.func) or "").endswith("device_count") for op in operands
            )
        if kind is cst.Name or kind is cst.Attribute:
            last = test.value if kind is cst.Name else test.attr.value
            return bool(words.DEVICE_FLAG_NAME.match(last.lower()))
        return False

    def is_interval_test(self, test: cst.BaseExpression) -> bool:
        """A test that fires on some steps only: a modulo (`step % 100`) or an interval-like name (`log_every`)."""
        finder = _IntervalFinder()
        visit_readonly(test, finder)
        return finder.found

    def _receiver(self) -> str:
        """The instance receiver where the traversal is (see `method_receiver`), once per class and function:
        the enclosing class and innermost function fix every enclosing function."""
        cls = self.enclosing.innermost_class()
        function = self.enclosing.innermost_function()
        key = (id(cls), id(function))
        receiver = self._receivers.get(key)
        if receiver is None:
            receiver = self._receivers[key] = method_receiver(cls, self.enclosing.enclosing_functions())
        return receiver

    def _body_and_gated(self) -> tuple[Union[FunctionFrame, LoopFrame, None], bool]:
        """The innermost function or loop body (see `_innermost_body`) and whether a gate stands between it
        and the traversal, found once per frame on top of the stack: the frames under a frame never change
        while it is there, and every call of the file asks."""
        top = self._stack[-1] if self._stack else None
        known = self._body_at
        if known is not None and known[0] is top:
            return known[1], known[2]
        body = self._innermost_body()
        gated = body is not None and any(
            isinstance(frame, BranchFrame) and frame.gate for frame in self._stack[self._stack.index(body) + 1 :]
        )
        self._body_at = (top, body, gated)
        return body, gated

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


class _IntervalFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Modulo:
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if words.INTERVAL_NAME.search(node.value):
            self.found = True
