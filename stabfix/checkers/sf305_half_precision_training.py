"""SF305 half-precision-training: a whole model cast to float16 and trained as it is.

A finding is a cast of a whole model to float16 (`numeric_guards.half_cast_receiver`: `model.half()`,
`model.to(torch.float16)`, `model.to(device, dtype=torch.half)`, also as the value bound to the model:
`model = Net().cuda().half()`) where
- the model is spelled as a variable or one attribute of `self` (`model`, `self.net`): a submodule
  (`model.encoder.half()`, `m.half()` for `m` in `model.modules()`) is not the whole model;
- an optimizer of the file is built over its parameters (`flow.parameters`: `model.parameters()`,
  filtered by `requires_grad`, a param group of it, a name bound to one): an optimizer over a float32
  copy (apex-style master weights) is not;
- the cast runs before training: in its own function, before a step or a call of a function that steps
  (the `summaries` part), or where no training runs, in module code, an `__init__`, or the function that
  builds the optimizer; a cast after the last step (export after training) is not;
- the file scales no loss (`amp.scaling()` empty: no `GradScaler`, no wrapper that scales).
bfloat16 casts are left alone (its range is float32's; the page says what pure bf16 costs). No fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.syntax import code_for
from stabfix.model.calls.event_kinds import Event, LocalCall, Step
from stabfix.model.calls.modules import chain_receiver
from stabfix.model.calls.numeric_guards import half_cast_receiver
from stabfix.model.flow.parameters import all_parameters_of, models_in
from stabfix.model.source.imports import dotted_name


@dataclass(frozen=True)
class _Cast:
    call: cst.Call
    model: str  # the whole model as spelled: `model`, `self.net`
    function: Optional[cst.FunctionDef]
    cls: Optional[cst.ClassDef]


class HalfPrecisionTraining(Checker):
    code = "SF305"
    tokens = (".half", "float16")
    also_needs = (("step",), ("backward",))
    needs = ("amp", "events", "optimizers", "summaries")

    def __init__(self, context) -> None:
        super().__init__(context)
        self._casts: dict[int, _Cast] = {}

    def visit_Call(self, node: cst.Call) -> None:
        receiver = half_cast_receiver(node, self.model.names)
        if receiver is not None:
            self._record(node, chain_receiver(receiver))

    def visit_Assign(self, node: cst.Assign) -> None:
        """`model = Net().half()`: the cast module is the one bound (a construction has no name of its own)."""
        link = node.value
        while type(link) is cst.Call and type(link.func) is cst.Attribute:
            if half_cast_receiver(link, self.model.names) is not None and len(node.targets) == 1:
                self._record(link, node.targets[0].target, replace=True)
            link = link.func.value

    def _record(self, call: cst.Call, spelled: cst.BaseExpression, replace: bool = False) -> None:
        name = dotted_name(spelled)
        if name is None or not _whole_model(name) or (id(call) in self._casts and not replace):
            return
        enclosing = self.model.enclosing
        self._casts[id(call)] = _Cast(call, name, enclosing.innermost_function(), enclosing.innermost_class())

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._casts or self.model.amp.scaling():
            return
        events = self.model.events
        if not events.of_kind("backward") or not events.of_kind("step"):
            return
        built = [e for e in events.of_kind("optimizer") if type(e.node) is cst.Call]
        for cast in self._casts.values():
            optimizer = next((e for e in built if _trains(e.node, cast.model, self.model.names)), None)
            if optimizer is None or not self._before_training(cast, optimizer) or self._wrapped(optimizer):
                continue
            self.report(cast.call, self._message(cast, optimizer))

    def _before_training(self, cast: _Cast, optimizer: Event) -> bool:
        """Some training runs after the cast: a step, or a call of a function that steps, later in the
        cast's own function; with none there, the cast sets the model up (module code, `__init__`, the
        function that builds the optimizer)."""
        positions = self.context.positions
        here = self.model.events.in_function(cast.function)
        anchors = [e for e in here if isinstance(e, Step) or (isinstance(e, LocalCall) and self._trains_in(e))]
        if anchors:
            return positions.line(cast.call) < max(positions.line(e.node) for e in anchors)
        if cast.function is None or cast.function.name.value == "__init__":
            return True
        return optimizer.site.function is cast.function

    def _wrapped(self, optimizer: Event) -> bool:
        """The optimizer is handed to a wrapper whose `backward(loss)` the file calls (apex's `FP16_Optimizer`
        keeps float32 master weights and scales the loss): `opt = Wrapper(opt, ...)`, `opt.backward(loss)`."""
        names = self.model.names
        for backward in self.model.events.of_kind("backward"):
            call = backward.node
            if not (type(call) is cst.Call and type(call.func) is cst.Attribute and call.args):
                continue
            receiver = call.func.value
            holder = names.single_value(receiver) if type(receiver) is cst.Name and receiver in names.uses else None
            if type(holder) is cst.Call and any(_holds(arg.value, optimizer.node, names) for arg in holder.args):
                return True
        return False

    def _trains_in(self, call: LocalCall) -> bool:
        if type(call.node) is not cst.Call:
            return False
        effects = self.model.summaries.effects_at(call.node)
        return any(effect.kind in ("step", "backward") for effect in effects)

    def _message(self, cast: _Cast, optimizer: Event) -> str:
        line = self.context.positions.line(optimizer.node)
        return (
            f"`{_short(cast.call)}` makes every weight of `{cast.model}` float16 and the optimizer built on line {line} "
            "updates those weights with no float32 master copy and no `GradScaler`: small gradients underflow to zero "
            "and updates below half a float16 step of a weight (about 1/2048 of it) round away; keep the weights in "
            "float32 and compute under `torch.autocast(..., dtype=torch.bfloat16)`, or float16 autocast with a `GradScaler`"
        )


def _whole_model(name: str) -> bool:
    """`model`, `self.net`: not a submodule (`model.encoder`, `self.net.head`)."""
    parts = name.split(".")
    return len(parts) == 1 or (len(parts) == 2 and parts[0] == "self")


def _holds(expr: cst.BaseExpression, constructor: cst.CSTNode, names) -> bool:
    """`expr` is the optimizer `constructor` builds (the call itself, or a name bound to it)."""
    return expr is constructor or (type(expr) is cst.Name and expr in names.uses and any(
        binding.bound_value is constructor for binding in names.reaching(expr)))


def _trains(constructor: cst.Call, model: str, names) -> bool:
    """The optimizer is handed the model's parameters (all, or a group of a submodule of it)."""
    whole = all_parameters_of(constructor, names)
    spelled = {dotted_name(whole.model) or ""} if whole is not None else models_in(constructor)
    first = constructor.args[0].value if constructor.args else None
    if whole is None and type(first) is cst.Name and first in names.uses:
        groups = names.single_value(first)  # `groups = [{"params": model.encoder.parameters()}, ...]`
        if type(groups) in (cst.List, cst.Tuple) and all(type(e.value) is cst.Dict for e in groups.elements):
            spelled = models_in(constructor.with_changes(args=[cst.Arg(groups)]))
    own = model.removeprefix("self.")
    return any(m.removeprefix("self.") == own or m.removeprefix("self.").startswith(own + ".") for m in spelled if m)


def _short(node: cst.CSTNode) -> str:
    text = code_for(node)
    return text if len(text) <= 50 else text[:47] + "..."
