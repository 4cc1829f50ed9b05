"""Gradient accumulation: loops whose backward runs on every iteration but whose optimizer step runs
on every N-th (`if (i + 1) % N == 0: optimizer.step()`), and how the differentiated loss is scaled.

The model's `accumulation` part, built on `events` (backward passes and optimizer steps with their
loops and branches) and `optimizers` (which stepped object is an optimizer). During the traversal it
only records each `if` with the loops around it, and the bodies of `with X.accumulate(...)` blocks
(accelerate, Fabric: the library scales the loss itself). Queried afterwards:

- `loops()`: one `Accumulation` per backward pass that runs on every iteration of a loop whose
  optimizer steps all sit behind a modulo test of that loop (`% N`), with `N` as written; or of a
  loop over the micro-batches of one batch (`for i in range(0, len(x), micro): ... x[i:i + micro]`,
  `for xb in x.split(micro)`) whose optimizer step runs once around it (`every` None: the count is
  how many slices the batch has) — never a loop that clears the gradients on every pass
  (`cleared_every_pass`: `zero_grad()` at the top of each iteration and a step every N-th only
  sub-samples the updates; nothing accumulates);
- `gated_loops()`: those of `loops()` with a modulo gate (`every` set), cheap where the file has no
  `if ... % N` inside a loop;
- `divisors(expr)`: the divisions and multiplications applied to a loss on its way to `backward()`,
  following its bindings (`loss = loss / N`, `loss /= N`, `(loss / N).backward()`);
- `cleared_every_pass(found)`: gradients are cleared on every pass of its loop, by the loop's own code
  or by a helper it calls (`call_clears`, set by the `summaries` part when a rule reads it), so
  nothing accumulates after all; `loops()` leaves such loops out. When the `summaries` part is built
  (every rule that reads this part reads it), `events` is `events_through_calls`' view: a helper's step
  under the gate, or its clear, counts at its call;
- `library_managed(site)`: the site runs inside `with accelerator.accumulate(...)`, where the library
  syncs gradients and steps only on every N-th pass;
- `is_plain_loss(expr)`: the value is shown to be an unscaled per-batch loss: a loss call, the
  `.loss`/`["loss"]` of what a call returned (a model's output record), a `.mean()`, or a sum of those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from stabfix.model.calls.events import Backward, Events, Step
from stabfix.model.calls.losses import LossIndex
from stabfix.model.calls.optimizers import OptimizerTracker
from stabfix.model.source.node_fields import visit_readonly

_ACCUMULATE_CONTEXTS = frozenset({"accumulate", "no_backward_sync"})
_SCALING = (cst.Divide, cst.Multiply)
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Accumulation:
    backward: Backward
    step: Step
    loop: cst.CSTNode  # the `for` or `while` loop
    gate: Optional[cst.If]  # the `if` whose test holds the modulo (None: a loop over one batch's slices)
    every: Optional[cst.BaseExpression]  # N of `% N` (None: as many as the batch has slices)
    loss: cst.BaseExpression  # what is differentiated, `scaler.scale(...)` peeled


class AccumulationIndex(cst.BatchableCSTVisitor):
    def __init__(self, events: Events, optimizers: OptimizerTracker, losses: LossIndex) -> None:
        super().__init__()
        self.events = events
        self.optimizers = optimizers
        self.losses = losses
        self._ifs: dict[int, tuple[cst.If, tuple[cst.CSTNode, ...]]] = {}
        self._loops: list[cst.CSTNode] = []
        self._managed: set[int] = set()  # ids of `with X.accumulate(...)` bodies
        self._divisors: dict[int, Optional[cst.BaseExpression]] = {}  # id(if) -> `_modulo_divisor` of its test
        # set by the `summaries` part when built: whether a call runs a function (of this file or another)
        # that clears gradients (`zero_grad` effect); without it only the loop's own clears are seen
        self.call_clears: Optional[Callable[[cst.Call], bool]] = None

    # -- traversal ----------------------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._loops.pop()

    def visit_If(self, node: cst.If) -> None:
        self._ifs[id(node)] = (node, tuple(self._loops))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if type(call) is cst.Call and type(call.func) is cst.Attribute:
                if call.func.attr.value in _ACCUMULATE_CONTEXTS:
                    self._managed.add(id(node.body))

    # -- queries -------------------------------------------------------------------------------------
    def loops(self) -> list[Accumulation]:
        found: list[Accumulation] = []
        for backward in self.events.of_kind("backward"):
            assert isinstance(backward, Backward)
            loss = _peel_scaler(backward.loss) if backward.loss is not None else None
            if loss is None or not self._on_tensor(backward) or self.library_managed(backward.site):
                continue
            accumulation = self._gated_step(backward, loss)
            if accumulation is not None and not self.cleared_every_pass(accumulation):
                found.append(accumulation)
        return found

    def gated_loops(self) -> list[Accumulation]:
        """The `loops()` whose optimizer step sits behind a modulo test (`every` set). A file with no
        `if ... % N` inside a loop has none, and then the events (and the summaries they splice) are not asked."""
        if not any(loops and self._divisor_of(node) is not None for node, loops in self._ifs.values()):
            return []
        return [found for found in self.loops() if found.every is not None]

    def manages_any(self) -> bool:
        """Whether the file has a `with X.accumulate(...)` body at all (else `library_managed` is always False)."""
        return bool(self._managed)

    def divisors(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
        """What a loss is divided or multiplied by before it reaches `backward()`, outermost first."""
        if depth > _MAX_DEPTH:
            return []
        expr = _unparen(expr)
        if type(expr) is cst.BinaryOperation and isinstance(expr.operator, _SCALING):
            return [expr.right, *self.divisors(expr.left, depth + 1)]
        if type(expr) is cst.Name:
            binding = self._latest(expr)
            if binding is None:
                return []
            node = binding.node
            if binding.kind == "augment" and type(node) is cst.AugAssign:
                if type(node.operator) in (cst.DivideAssign, cst.MultiplyAssign):
                    return [node.value, *self.divisors(node.target, depth + 1)] if type(node.target) is cst.Name else [node.value]
                return []
            return self.divisors(binding.bound_value, depth + 1) if binding.bound_value is not None else []
        return []

    def is_plain_loss(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        expr = _unparen(expr)
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
            return self.is_plain_loss(expr.expression, depth + 1)  # `-torch.min(...).mean()`
        if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
            return self.is_plain_loss(expr.left, depth + 1) and self.is_plain_loss(expr.right, depth + 1)
        if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
            return self.is_plain_loss(expr.right, depth + 1) or self.is_plain_loss(expr.left, depth + 1)  # `w * term`
        if type(expr) is cst.Attribute and expr.attr.value == "loss" or (
            type(expr) is cst.Subscript and _string_key(expr) == "loss"
        ):
            return self._call_result(expr.value)  # `model(**batch).loss`, `outputs["loss"]`: the batch mean
        if type(expr) is cst.Call:
            if type(expr.func) is cst.Attribute and expr.func.attr.value == "mean" and not expr.args:
                return True
            loss = self.losses.resolve(expr)  # a torch loss (mean by default); a user loss may divide inside
            return loss is not None and loss.library and not _sums(expr)
        if type(expr) is cst.Name:
            binding = self._latest(expr)
            return binding is not None and binding.bound_value is not None and self.is_plain_loss(binding.bound_value, depth + 1)
        return False

    def cleared_every_pass(self, found: Accumulation) -> bool:
        """A gradient clear (`zero_grad()`, `p.grad = None`) runs on every pass of the loop, under no condition
        the backward does not share: nothing accumulates across passes, whatever gates the step."""
        theirs = set(found.backward.site.branches)
        if any(not event.site.in_lambda and event.site.function is found.backward.site.function
               and set(event.site.branches) <= theirs for event in self.events.iteration(found.loop, "clear")):
            return True
        return self.call_clears is not None and any(self.call_clears(call) for call in _unconditional_calls(found.loop))

    def spliced(self, event) -> Optional[str]:
        """For an event that stands for what a called function runs (`events` is the through-calls view), the
        `detail` of the callee's effect ("tensor": its backward was `t.backward()`); None for the code's own
        event: a rule offers no rewrite of a call that runs more than the event."""
        effect_of = getattr(self.events, "effect_of", None)  # only the through-calls view splices
        effect = effect_of(event) if effect_of is not None else None
        return (effect.detail or "") if effect is not None else None

    def _on_tensor(self, backward: Backward) -> bool:
        spliced = self.spliced(backward)
        return spliced == "tensor" if spliced is not None else _on_tensor(backward)

    def library_managed(self, site) -> bool:
        """The site sits in a `with X.accumulate(...)` body: the library syncs and steps every N-th pass."""
        return any(id(block) in self._managed for block in site.blocks)

    # -- helpers -------------------------------------------------------------------------------------
    def _latest(self, name: cst.Name):
        """The binding a use of a name sees on the straight path through one iteration: the last one
        before it (a loop's later bindings are the previous iteration's, not this one's)."""
        use = self.losses.names.uses.get(name)
        if use is None:
            return None
        before = [b for b in self.losses.names.reaching(name) if b.order < use.order]
        return before[-1] if before else None

    def _call_result(self, expr: cst.BaseExpression) -> bool:
        """What a call returned (a model's output record), directly or through one name."""
        if type(expr) is cst.Call:
            return True
        if type(expr) is cst.Name:
            values = [b.bound_value for b in self.losses.names.reaching(expr)]
            return bool(values) and all(type(v) is cst.Call for v in values)
        return False

    def _gated_step(self, backward: Backward, loss: cst.BaseExpression) -> Optional[Accumulation]:
        if not backward.site.any_loops:
            return None
        loop = backward.site.any_loops[-1]
        steps = [
            event
            for event in self.events.in_function(backward.site.function, "step")
            if isinstance(event, Step) and any(l is loop for l in event.site.any_loops) and self._steps_optimizer(event)
        ]
        if not steps:
            return self._step_around_slices(backward, loss, loop)
        gated: list[tuple[Step, cst.If, cst.BaseExpression]] = []
        for step in steps:
            gate = self._modulo_gate(step, loop, backward)
            if gate is None:
                return None  # a step on every iteration: no accumulation
            gated.append((step, *gate))
        step, gate, every = gated[0]
        return Accumulation(backward, step, loop, gate, every, loss)

    def _step_around_slices(self, backward: Backward, loss: cst.BaseExpression, loop: cst.CSTNode) -> Optional[Accumulation]:
        """The loop runs over the slices of one batch and the optimizer steps once per pass of the code
        around it: every slice's backward adds to the same step."""
        if type(loop) is not cst.For or not _slices_one_batch(loop):
            return None
        outer = backward.site.any_loops[:-1]
        steps = [
            event
            for event in self.events.in_function(backward.site.function, "step")
            if isinstance(event, Step) and len(event.site.any_loops) == len(outer)
            and all(a is b for a, b in zip(event.site.any_loops, outer)) and self._steps_optimizer(event)
        ]
        return Accumulation(backward, steps[0], loop, None, None, loss) if steps else None

    def _divisor_of(self, node: cst.If) -> Optional[cst.BaseExpression]:
        """`_modulo_divisor` of the test, walked once per `if` (asked for the file and again per gated step)."""
        key = id(node)
        if key not in self._divisors:
            self._divisors[key] = _modulo_divisor(node.test)
        return self._divisors[key]

    def _steps_optimizer(self, step: Step) -> bool:
        return any(self.optimizers.resolve(candidate, step.site.scope) is not None for candidate in step.candidates)

    def _modulo_gate(self, step: Step, loop: cst.CSTNode, backward: Backward) -> Optional[tuple[cst.If, cst.BaseExpression]]:
        """The `if ... % N ...:` inside `loop` that the step sits under and the backward does not."""
        theirs = set(backward.site.branches)
        for branch in step.site.branches:
            if branch in theirs or branch[1] != "if.body" or branch[0] not in self._ifs:
                continue
            node, loops = self._ifs[branch[0]]
            if loops and loops[-1] is loop:
                every = self._divisor_of(node)
                if every is not None:
                    return node, every
        return None


def _unconditional_calls(loop: cst.CSTNode) -> list[cst.Call]:
    """The calls made as statements of the loop's own body, outside any branch: they run on every pass."""
    body = loop.body if type(loop) in (cst.For, cst.While) else None
    lines = body.body if type(body) is cst.IndentedBlock else ()
    return [small.value for line in lines if type(line) is cst.SimpleStatementLine
            for small in line.body if type(small) is cst.Expr and type(small.value) is cst.Call]


def _peel_scaler(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`scaler.scale(loss)` -> `loss` (AMP scaling is undone before the step)."""
    if (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "scale"
        and len(expr.args) == 1
    ):
        return expr.args[0].value
    return expr


def _on_tensor(backward: Backward) -> bool:
    """`loss.backward()` (a library's `engine.backward(loss)` may scale by the accumulation itself)."""
    call = backward.node
    return type(call) is cst.Call and type(call.func) is cst.Attribute and not call.args and call.func.attr.value == "backward"


_SPLITS = frozenset({"split", "chunk", "tensor_split"})


def _slices_one_batch(loop: cst.For) -> bool:
    """`for i in range(0, len(x), micro):` whose body slices from `i` (`x[i:i + micro]`), or a loop over
    `x.split(micro)` / `torch.chunk(x, n)` (also zipped): the micro-batches of one batch."""
    iterable = loop.iter
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "zip":
        return bool(iterable.args) and all(_is_split(arg.value) for arg in iterable.args)
    if _is_split(iterable):
        return True
    if not (type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "range"
            and len(iterable.args) == 3 and type(loop.target) is cst.Name):
        return False
    slices = _SlicesFrom(loop.target.value)
    visit_readonly(loop.body, slices)
    return slices.found


class _SlicesFrom(cst.CSTVisitor):
    def __init__(self, start: str) -> None:
        self.start = start
        self.found = False

    def visit_Slice(self, node: cst.Slice) -> None:
        if type(node.lower) is cst.Name and node.lower.value == self.start:
            self.found = True


def _is_split(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _SPLITS


def _modulo_divisor(test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    finder = _DivisorFinder()
    visit_readonly(test, finder)
    return finder.found[0] if finder.found else None


class _DivisorFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.BaseExpression] = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Modulo:
            self.found.append(node.right)


def _unparen(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=[], rpar=[]) if getattr(expr, "lpar", None) else expr


def _string_key(expr: cst.Subscript) -> Optional[str]:
    if len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        value = expr.slice[0].slice.value
        if type(value) is cst.SimpleString:
            return value.evaluated_value if isinstance(value.evaluated_value, str) else None
    return None


def _sums(call: cst.Call) -> bool:
    """A loss with `reduction="sum"`: accumulated sums are the loss of the larger batch already."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "reduction" and type(arg.value) is cst.SimpleString:
            return arg.value.evaluated_value == "sum"
    return False
