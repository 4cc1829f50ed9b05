"""SF411 accumulation-loss-not-normalized: gradient accumulation that backpropagates each
micro-batch's mean loss without dividing by the number of accumulation steps, or divides twice.

A query over the `accumulation` part: for each backward that runs on every iteration of a loop whose
optimizer steps run behind `% N` (accumulation over N micro-batches), the loss it differentiates
must be scaled once (over the slices of one batch with one step around the loop, scaled at all):
- shown to be a plain per-batch loss (a loss call, `outputs.loss`, a `.mean()`, a sum of those)
  and never divided or multiplied on its way to `backward()`: the gradients are N times too large
  (report; unsafe fix `(loss / N).backward()`);
- divided by `N` twice (`loss = loss / N` and then `(loss / N).backward()`): N times too small;
- divided by a running count of the passes (`loss / (i + 1)` of `enumerate`, `seen += 1; loss / seen`:
  `per_pass.running_count`) instead of `N`: each micro-batch gets weight 1/1, 1/2, 1/3, ..., not 1/N.
Losses the code does not show (a helper of another file) and libraries that scale the loss
themselves (`accelerator.accumulate`, `engine.backward(loss)`) are left alone.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.flow.per_pass import running_count
from stabfix.model.source.syntax import node_code
from stabfix.model.training.accumulation import Accumulation
from stabfix.model.training.step_frames import loop_header

_MAX_TEXT = 50


class AccumulationLossNotNormalized(Checker):
    code = "SF411"
    tokens = ("%", "range(", "split(", "chunk(")  # a modulo gate, or a loop over slices of one batch
    also_needs = (("backward",), ("step",))
    needs = ("accumulation", "names", "events", "summaries")

    def _running_counter(self, found: Accumulation) -> cst.BaseExpression | None:
        """The divisor of the loss that counts the loop's passes, if any."""
        names = self.model.names
        function = found.backward.site.function
        scope = names.scope_of(function) if function is not None else names.module_scope
        if scope is None:
            return None
        span = self.model.events.loop_span(found.loop)  # type: ignore[arg-type]
        for divisor in self.model.accumulation.divisors(found.loss):
            if running_count(divisor, found.loop, scope, span):
                return divisor
        return None

    def leave_Module(self, original_node: cst.Module) -> None:
        accumulation = self.model.accumulation
        for found in accumulation.loops():
            scaled = [_text(divisor) for divisor in accumulation.divisors(found.loss)]
            if found.every is None:  # micro-batches of one batch: any scaling is the author's share
                if not scaled and accumulation.is_plain_loss(found.loss):
                    self.report(found.backward.node, _unscaled_slices(found))
                continue
            every = _text(found.every)
            counter = self._running_counter(found)
            if counter is not None:
                self.report(found.backward.node, _by_counter(found, counter, every))
            elif not scaled and accumulation.is_plain_loss(found.loss):
                fix = None if accumulation.spliced(found.backward) is not None else _divide_fix(found)  # a helper's backward
                self.report(found.backward.node, _unscaled(found, every), fix)
            elif scaled.count(every) >= 2:
                self.report(found.backward.node, _twice(found, every))


def _by_counter(found: Accumulation, counter: cst.BaseExpression, every: str) -> str:
    loss = found.loss
    if type(loss) is cst.BinaryOperation and loss.right is counter:
        loss = loss.left  # `(loss / seen).backward()`: name the loss, not the division
    return (
        f"`{_text(loss)}` is divided by `{_text(counter)}`, which counts the passes of `{loop_header(found.loop)}` "
        f"(1, 2, 3, ...), not by the `{every}` micro-batches of each optimizer step: the micro-batches are weighted "
        f"1/1, 1/2, 1/3, ... and the gradients shrink as training goes on; divide by `{every}`"
    )


def _unscaled(found: Accumulation, every: str) -> str:
    loss = _text(found.loss)
    return (
        f"`{loss}` is backpropagated on every micro-batch but the optimizer steps once per `{every}` of them "
        f"and the loss is never divided, so gradients come out `{every}`× too large; backpropagate `{loss} / {every}`"
    )


def _unscaled_slices(found: Accumulation) -> str:
    loss = _text(found.loss)
    return (
        f"`{loss}` is each micro-batch's mean, backpropagated on every pass of `{loop_header(found.loop)}` over the "
        f"slices of one batch, and the optimizer steps once for all of them without the loss being scaled, so "
        f"gradients come out as many times too large as there are slices; weight each one by its share of the "
        f"batch (`{loss} * len(micro_batch) / len(batch)`)"
    )


def _twice(found: Accumulation, every: str) -> str:
    return (
        f"`{_text(found.loss)}` is divided by `{every}` twice before `backward()`: the accumulated gradient is "
        f"`{every}` times too small; divide once"
    )


def _divide_fix(found: Accumulation) -> Fix | None:
    if found.every is None or type(found.every) not in (cst.Name, cst.Attribute, cst.Integer):
        return None  # `% (a * b)` and the like: the author names the count
    loss = found.loss
    if type(loss) not in (cst.Name, cst.Attribute, cst.Call, cst.Subscript):
        loss = loss.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    divided = cst.BinaryOperation(
        left=loss,
        operator=cst.Divide(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=found.every.deep_clone(),
    )
    if found.loss is _receiver(found):  # `loss.backward()` -> `(loss / N).backward()`
        divided = divided.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return Fix("unsafe", f"divide the loss by `{_text(found.every)}` before backward()", {found.loss: divided})


def _receiver(found: Accumulation) -> cst.BaseExpression | None:
    call = found.backward.node
    return call.func.value if type(call) is cst.Call and type(call.func) is cst.Attribute else None


def _text(node: cst.CSTNode) -> str:
    code = " ".join(node_code(node).split())
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
