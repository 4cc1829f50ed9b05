"""The frames of a file's training structure, as the `steps` part (`structure.py`) records them: the
classes, functions, loops and branches around a statement, what each body does itself (backward
passes, optimizer steps, calls, counters), the step path of a site, and the small syntax facts
about loops and functions they are read from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from stabfix.model.flow.values import Value
from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names

# --- frames -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepCall:
    """A call that steps something: `optimizer.step()`, `scaler.step(opt)`, `xm.optimizer_step(opt)`."""

    receiver: str | None  # dotted receiver of `.step`
    first_argument: str | None  # dotted first positional argument
    always: bool = False  # an explicit optimizer step (`optimizer_step`)


@dataclass(eq=False)
class PathFacts:
    """What one function or loop body does itself (outside nested loops and functions)."""

    backward: list[cst.Call] = field(default_factory=list)
    step_candidates: list[StepCall] = field(default_factory=list)
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


# --- small helpers ------------------------------------------------------------------------------


def loop_header(node: Union[cst.For, cst.While]) -> str:
    code = cst.Module(body=[])
    if type(node) is cst.For:
        text = f"for {code.code_for_node(node.target)} in {code.code_for_node(node.iter)}"
    else:
        text = f"while {code.code_for_node(node.test)}"
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


def loop_index(node: Union[cst.For, cst.While]) -> str | None:
    """`step` in `for step, batch in enumerate(loader)` / `for step in range(n)` (also through tqdm)."""
    if type(node) is not cst.For:
        return None
    iterable = node.iter
    for _ in range(3):
        if type(iterable) is not cst.Call:
            return None
        func = dotted_name(iterable.func) or ""
        last = func.rsplit(".", 1)[-1]
        if last == "enumerate":
            target = node.target
            if type(target) in (cst.Tuple, cst.List) and target.elements:
                first = target.elements[0].value
                return first.value if type(first) is cst.Name and first.value != "_" else None
            return None
        if last in ("range", "trange"):
            positional = [arg for arg in iterable.args if arg.keyword is None]
            if len(positional) > 2 or type(node.target) is not cst.Name or node.target.value == "_":
                return None
            return node.target.value
        # a progress-bar wrapper: tqdm(enumerate(loader)), track(range(n))
        if not iterable.args:
            return None
        iterable = iterable.args[0].value
    return None


def best_increment(increments: list[tuple[str, bool]]) -> str | None:
    named = [target for target, _ in increments if words.STEP_COUNTER_ATTRIBUTE.search(target.rsplit(".", 1)[-1])]
    if named:
        return named[0]
    ungated = [target for target, every in increments if every]
    return ungated[0] if ungated else None


def parameter_names(node: cst.FunctionDef) -> list[str]:
    params = node.params
    return [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]


def is_live_loss(value: Value) -> bool:
    """A loss or a model's output that still carries its autograd graph."""
    return (value.reduced or value.model_output) and not (
        value.host or value.not_tensor or value.detached or value.snapshot or value.parameter or value.metadata
    )


def constructs_optimizer(name: str) -> bool:
    if name.startswith("torch.optim.") and ".lr_scheduler" not in name and ".swa_utils" not in name:
        return True
    last = name.rsplit(".", 1)[-1]
    return last.endswith("optimizers") or last.endswith("Optimizer")


def is_device_string(node: cst.BaseExpression) -> bool:
    if type(node) is cst.SimpleString:  # exact types (see node_fields.node_kinds)
        text = node.evaluated_value
        return isinstance(text, str) and text.split(":")[0].lower() in words.DEVICE_STRINGS
    return False


def per_iteration_event_handler(node: cst.FunctionDef) -> bool:
    """`@trainer.on(Events.ITERATION_COMPLETED)` (ignite): runs after every iteration.
    `Events.ITERATION_COMPLETED(every=100)` is a call, and so an interval, not every iteration."""
    for decorator in node.decorators:
        call = decorator.decorator
        if not (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "on"):
            continue
        for arg in call.args:
            event = dotted_name(arg.value) or ""
            if event.rsplit(".", 1)[-1] in ("ITERATION_COMPLETED", "ITERATION_STARTED"):
                return True
    return False


def is_harness(name: str) -> bool:
    return bool(words.HARNESS_FUNCTION.match(name))


def never_a_step(name: str) -> bool:
    """Teardown, evaluation, generation, or a test/benchmark harness."""
    return is_harness(name) or bool(words.NEVER_STEP_FUNCTION.match(name.lstrip("_") or name))




_COUNTERS = {"range", "trange", "count", "repeat"}
_ITERATION_WRAPPERS = {"enumerate", "tqdm", "track", "reversed", "list", "tuple", "iter", "zip", "sorted"}


def _iterated(node: Union[cst.For, cst.While]) -> cst.BaseExpression | None:
    """What a `for` loop iterates, through `enumerate(...)`, progress bars and `zip(...)` (first argument)."""
    if type(node) is not cst.For:
        return None
    iterable = node.iter
    for _ in range(4):
        if not (type(iterable) is cst.Call and iterable.args):
            break
        last = (dotted_name(iterable.func) or "").rsplit(".", 1)[-1]
        if last not in _ITERATION_WRAPPERS:
            break
        iterable = iterable.args[0].value
    return iterable


def _is_counter(iterable: cst.BaseExpression) -> bool:
    return type(iterable) is cst.Call and (dotted_name(iterable.func) or "").rsplit(".", 1)[-1] in _COUNTERS


def draws_per_iteration(loop: LoopFrame, names: Names | None) -> bool:
    """Each iteration takes new data: the loop calls `next()`, or iterates something other than a counter
    or constants written in the code (`enumerate([10, 20])`: the phases of a run, warm-up then timed)."""
    iterable = _iterated(loop.node)
    if "next" in loop.facts.calls:
        return True
    if type(iterable) is cst.Name and names is not None:
        iterable = names.single_value(iterable) or iterable
    return iterable is not None and not _is_counter(iterable) and not _is_constant(iterable)


def _is_constant(node: cst.BaseExpression) -> bool:
    """A number, a string, or a list/tuple/set display of them."""
    if type(node) in (cst.List, cst.Tuple, cst.Set):
        return all(type(e) is not cst.StarredElement and _is_constant(e.value) for e in node.elements)
    if type(node) is cst.UnaryOperation:
        return _is_constant(node.expression)
    return type(node) in (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def iterates_over(node: Union[cst.For, cst.While], names: set[str]) -> bool:
    """The loop repeats a number of times, or iterates data named by one of `names`."""
    iterable = _iterated(node)
    if iterable is None:
        return False
    if _is_counter(iterable):
        return True
    root = iterable
    while type(root) in (cst.Attribute, cst.Call, cst.Subscript):
        root = root.value if type(root) is not cst.Call else root.func
    return type(root) is cst.Name and root.value in names


def target_names(target: cst.BaseExpression):
    target_type = type(target)  # exact types (see node_fields.node_kinds)
    if target_type is cst.Name:
        yield target
    elif target_type is cst.Tuple or target_type is cst.List:
        for element in target.elements:
            yield from target_names(element.value)
    elif target_type is cst.StarredElement:
        yield from target_names(target.value)
