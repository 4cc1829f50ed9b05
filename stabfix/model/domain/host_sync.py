"""Host syncs: expressions that make the CPU wait until the accelerator has finished its queued work.

PyTorch queues kernels on the accelerator and returns at once; the host runs ahead and queues the next
step while the device works. An expression that needs a value *on the host* stops that: the host waits
for every queued kernel, copies the value back, and only then goes on, so the device idles while the
next kernels are launched. The model part `syncs` answers `sync_of(call)` and `truth_test_sync(test)`
with a `Sync`, or None:

- `barrier`: a device-wide wait that computes nothing: `torch.cuda.synchronize()` (also `torch.mps`/
  `xpu`/`npu`/`accelerator`, and `torch.cuda.current_stream().synchronize()`), however imported.
- `snapshot`: a memory report built on the host from every allocator segment: `torch.cuda.memory_summary()`,
  `torch.cuda.memory._snapshot()`, `torch.cuda.memory_snapshot()`. (`memory_allocated()` reads a host-side
  counter and is free: it is no sync and not reported.)
- `check`: a health check: a tensor in a Python truth test (`if torch.isnan(loss).any():`,
  `assert torch.isfinite(x).all()`, `if loss > 1e4:`) or read to the host from a NaN/Inf test
  (`torch.isnan(t).any().item()`), `torch.equal`/`torch.allclose`.
- `read`: a tensor value read to the host: `.item()`, `.tolist()`, `.cpu()` / `.to("cpu")`, `float(t)`,
  `int(t)`, `bool(t)`, `math.isnan(t)`. A module's `.cpu()`, `.item()` of numpy/Python data and values already on the host
  are not syncs.

`Sync.value` is the expression whose value crosses to the host (for messages and for deciding whether it
is computed per item of a loop: `per_item_loop(steps, path, value)`, the loop inside a training step that runs
a site once per item, a micro-batch, a layer or a parameter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.calls.modules import ModuleIndex
from stabfix.model.flow.values import Value, Values
from stabfix.model.source.node_fields import code_children
from stabfix.model.training.step_frames import FunctionFrame, LoopFrame, StepPath, target_names
from stabfix.model.training.structure import StepIndex

DEVICE_MODULES = ("cuda", "mps", "xpu", "npu", "mlu", "musa", "accelerator")
BARRIER_CALLS = frozenset(f"torch.{module}.synchronize" for module in DEVICE_MODULES) | {
    "torch_xla.core.xla_model.wait_device_ops"
}
STREAM_GETTERS = frozenset(
    f"torch.{module}.{getter}" for module in DEVICE_MODULES for getter in ("current_stream", "default_stream")
)
SNAPSHOT_CALLS = frozenset(
    f"torch.{module}.{name}"
    for module in DEVICE_MODULES
    for name in ("memory_summary", "memory_snapshot", "memory._snapshot", "memory.memory_summary", "list_gpu_processes")
)
# torch functions whose result is a boolean tensor about finiteness, or that compare on the device
NONFINITE_TESTS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal"})
DEVICE_COMPARISONS = frozenset({"equal", "allclose"})
_TORCH_COMPARISONS = frozenset(f"torch.{op}" for op in DEVICE_COMPARISONS)
TRUTH_REDUCTIONS = frozenset({"any", "all"})
READ_METHODS = frozenset({"item", "tolist", "cpu"})
READ_BUILTINS = frozenset({"float", "int", "bool"})
# the constants for infinity of the libraries, and what `float("...")` parses as infinity
INFINITY_CONSTANTS = frozenset({"torch.inf", "math.inf", "numpy.inf", "numpy.Inf", "numpy.PINF", "numpy.NINF"})
INFINITY_SPELLINGS = frozenset({"inf", "infinity"})
MATH_TESTS = frozenset({"math.isnan", "math.isinf", "math.isfinite"})  # `math.isnan(t.mean())` reads t first


@dataclass(frozen=True)
class Sync:
    kind: str  # "barrier", "snapshot", "check", "read"
    node: cst.CSTNode  # where it is reported
    value: Optional[cst.BaseExpression] = None  # what crosses to the host


class HostSyncs:
    """Classifies calls and truth tests as host syncs (see the module docstring)."""

    def __init__(self, values: Values, modules: Optional[ModuleIndex]) -> None:
        self.values = values
        self.modules = modules
        self.devices: DeviceKinds = values.devices  # a `.to(d)` goes home when what `d` holds is the host

    def qualify(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.values.qualify(expr)

    def sync_of(self, call: cst.Call) -> Optional[Sync]:
        name = self.qualify(call.func) or ""
        if name in BARRIER_CALLS:
            return Sync("barrier", call)
        if name in SNAPSHOT_CALLS:
            return Sync("snapshot", call)
        func = call.func
        kind = type(func)  # exact types (libcst has no subclass of them): every candidate call is asked
        if kind is cst.Attribute and func.attr.value == "synchronize" and not name:  # type: ignore[attr-defined]
            inner = func.value  # type: ignore[attr-defined]
            if type(inner) is cst.Call and (self.qualify(inner.func) or "") in STREAM_GETTERS:
                return Sync("barrier", call)
        if name in _TORCH_COMPARISONS:
            return Sync("check", call, call)
        if name in MATH_TESTS and len(call.args) == 1 and self._on_device(call.args[0].value, strict=True):
            return Sync("check", call, call.args[0].value)
        if kind is cst.Name and func.value in READ_BUILTINS and not name and len(call.args) == 1:  # type: ignore[attr-defined]
            value = call.args[0].value
            if self._on_device(value, strict=True):
                return Sync(self._read_kind(value), call, value)
            return None
        if kind is cst.Attribute and not name:
            method = func.attr.value  # type: ignore[attr-defined]
            receiver = func.value  # type: ignore[attr-defined]
            moves_home = method in READ_METHODS or (method == "to" and self.devices.moves_to_host(call))
            if moves_home and self._on_device(receiver, strict=method in ("cpu", "to")):
                return Sync(self._read_kind(receiver), call, receiver)
        return None

    def truth_test_sync(self, test: cst.BaseExpression) -> Optional[Sync]:
        """A tensor that Python has to turn into a bool (an `if`/`while`/`assert` test, `not`, `and`/`or`)."""
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self.truth_test_sync(test.expression)
        if type(test) is cst.BooleanOperation:
            return self.truth_test_sync(test.left) or self.truth_test_sync(test.right)
        if type(test) is cst.Comparison:
            operands = [test.left, *(target.comparator for target in test.comparisons)]
            if any(type(t.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for t in test.comparisons):
                return None
            if any(self._certain_device_tensor(operand) for operand in operands):
                return Sync("check", test, test)
            return None
        if type(test) is cst.Call and self._is_tensor_truth_call(test):
            return Sync("check", test, test)
        return None

    # -- helpers ----------------------------------------------------------------------------------------
    def _is_tensor_truth_call(self, call: cst.Call) -> bool:
        name = self.qualify(call.func) or ""
        module, _, last = name.rpartition(".")
        if module == "torch" and (last in NONFINITE_TESTS or last in TRUTH_REDUCTIONS):
            return True
        func = call.func
        if type(func) is cst.Attribute and not name and func.attr.value in TRUTH_REDUCTIONS:
            receiver = func.value
            return self.mentions_nonfinite_test(receiver) or self._on_device(receiver, strict=True)
        if type(func) is cst.Attribute and not name and func.attr.value in NONFINITE_TESTS:
            return self._on_device(func.value, strict=False)
        return False

    def mentions_nonfinite_test(self, expr: cst.CSTNode) -> bool:
        """`torch.isnan(x)`, `x.isinf()`, `~torch.isfinite(x)` somewhere inside the expression."""
        kind = type(expr)  # exact types (libcst has no subclass of them): asked of every node of the value
        if kind is cst.Call:
            name = self.qualify(expr.func) or ""  # type: ignore[attr-defined]
            last = name.rpartition(".")[2] if name else (
                expr.func.attr.value if type(expr.func) is cst.Attribute else ""  # type: ignore[attr-defined]
            )
            if last in NONFINITE_TESTS and (name.startswith("torch.") or not name):
                return True
        if kind is cst.Comparison and self._compares_with_infinity(expr):  # type: ignore[arg-type]
            return True  # `(loss.abs() == torch.inf)` is `torch.isinf(loss)` spelled as a comparison
        # no whitespace or punctuation node holds a call or a comparison
        return any(self.mentions_nonfinite_test(child) for child in code_children(expr))

    def _compares_with_infinity(self, comparison: cst.Comparison) -> bool:
        """`x == torch.inf`, `x.abs() != float("inf")`, `-math.inf == x`: an equality test against infinity."""
        operands = [comparison.left, *(target.comparator for target in comparison.comparisons)]
        equality = all(type(target.operator) in (cst.Equal, cst.NotEqual) for target in comparison.comparisons)
        return equality and any(self._is_infinity(operand) for operand in operands)

    def _is_infinity(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
            return self._is_infinity(expr.expression)
        if type(expr) is cst.Call and type(expr.func) is cst.Name and not self.qualify(expr.func):
            if expr.func.value == "float" and len(expr.args) == 1 and type(expr.args[0].value) is cst.SimpleString:
                return str(expr.args[0].value.evaluated_value).strip().lower().lstrip("+-") in INFINITY_SPELLINGS
            return False
        return (self.qualify(expr) or "") in INFINITY_CONSTANTS

    def _read_kind(self, value: cst.BaseExpression) -> str:
        return "check" if self.mentions_nonfinite_test(value) else "read"

    def _certain_device_tensor(self, expr: cst.BaseExpression) -> bool:
        value = self.values.value_of(expr)
        return value.tensor and not value.host and not value.not_tensor and not value.metadata and not value.constant

    def _on_device(self, expr: cst.BaseExpression, *, strict: bool) -> bool:
        """A tensor that may live on the accelerator. `strict`: the code must show it is a tensor (for
        `.cpu()` that modules have too, and `float(x)` that takes any number); otherwise anything but
        Python/numpy data and host values counts (`.item()` exists only on tensors and numpy scalars)."""
        if self.modules is not None and self.modules.is_module(expr):
            return False
        value: Value = self.values.value_of(expr)
        if value.not_tensor or value.host or value.metadata or value.batch:
            return False
        if value.constant and not value.placed:
            return False  # a table built on the host by factories
        if not strict:
            return True
        return value.tensor or value.reduced or value.model_output or value.parameter or value.placed


def is_loop_item(value: Optional[cst.BaseExpression], loop: cst.CSTNode) -> bool:
    """The value is one of the loop's own items (`v` or `v["loss"]` in `for k, v in logs.items():`), read
    as it comes, rather than computed in the loop (`p.grad.norm()`, a micro-batch's loss)."""
    if value is None or type(loop) is not cst.For:
        return False
    own = {name.value for name in target_names(loop.target)}
    root = value
    while type(root) in (cst.Attribute, cst.Subscript):
        root = root.value
    return type(root) is cst.Name and root.value in own


def per_item_loop(steps: StepIndex, path: StepPath, value: Optional[cst.BaseExpression],
                  any_value: bool = False) -> Optional[LoopFrame]:
    """The loop inside the step (on `path`, a site's step path) that runs the site once per item (micro-batch,
    layer, parameter): a loop between the step and the site that computes `value` (not one of its own items,
    `is_loop_item`; any loop with `any_value`), or the step itself when it is a micro-batch loop inside a
    training loop or step function that does not step an optimizer (backward per micro-batch)."""
    for frame in path.between():
        if isinstance(frame, LoopFrame) and (any_value or not is_loop_item(value, frame.node)):
            return frame
    scope = path.scope
    if isinstance(scope, LoopFrame) and path.kind == "step" and not steps.steps_optimizer(scope):
        outer = [f for f in path.frames[: path.frames.index(scope)] if isinstance(f, (LoopFrame, FunctionFrame))]
        if any(steps.is_training_loop(f) if isinstance(f, LoopFrame) else steps.is_step_function(f)
               for f in outer[-1:]):
            return scope  # a micro-batch loop inside a step: backward per micro-batch
    return None


_TIMING_EVENTS = frozenset({"torch.cuda.Event", "torch.xpu.Event", "torch.Event"})


def measures_without_training(events, names, calls: list[cst.Call]) -> bool:
    """The file times device work with CUDA events (among its `calls`) and builds,
    steps, clears or updates no parameters (an optimizer, its step, `zero_grad`, a manual in-place update;
    `+=` also sums timings): a backward-pass benchmark, whose barriers make its timings true."""
    if events.of_kind("step") or events.of_kind("optimizer") or events.of_kind("clear") or any(
            event.operation != "+=" for event in events.of_kind("update")):
        return False
    return any(type(call.func) is cst.Attribute and call.func.attr.value == "Event"
               and names.qualify(call.func) in _TIMING_EVENTS for call in calls)
