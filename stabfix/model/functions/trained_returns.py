"""Where the file trains on what a function hands back, when the function's summary says its result is a fresh
leaf made to require grad (`ValueFacts.made_to_require_grad`: `loss = torch.tensor(l, requires_grad=True);
return loss`): `trained_return(function, names, summaries, gradients, events)` is the call of `function` whose
value a backward pass differentiates (`loss = photometric_loss(a, b); loss.backward()`: `(call, None)`) or is
the prediction of a loss anywhere in the file (`(call, loss)`, the `LossOperands` of the `gradients` part),
backward passes first, then losses, each in the file's order; the call is the value itself or the call every
binding of the name holds. None when nothing trains on it. A copy cut from the graph that a caller trains on
gets no gradient to the model (SF409).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.events import Events
from stabfix.model.calls.losses import LossOperands
from stabfix.model.flow.gradient_use import GradientFacts
from stabfix.model.functions.summaries import Summaries
from stabfix.model.source.names import Names


def trained_return(function: cst.FunctionDef, names: Names, summaries: Summaries, gradients: GradientFacts,
                   events: Events) -> Optional[tuple[cst.Call, Optional[LossOperands]]]:
    uses: list[tuple[Optional[cst.BaseExpression], Optional[LossOperands]]]
    uses = [(event.loss, None) for event in events.of_kind("backward")]  # type: ignore[attr-defined]
    uses += [(loss.prediction, loss) for scope in gradients.scopes for loss in gradients.of(scope).losses]
    for value, loss in uses:
        if value is None or not summaries.facts(value).made_to_require_grad:
            continue
        for call in _producing_calls(value, names):
            if names.definition_of(call) is function:
                return call, loss
    return None


def _producing_calls(expr: cst.BaseExpression, names: Names) -> list[cst.Call]:
    """The calls whose result `expr` is: the call itself, or the calls every binding of a name holds."""
    if type(expr) is cst.Call:
        return [expr]
    if type(expr) is not cst.Name:
        return []
    values = [binding.value for binding in names.reaching(expr)]
    return [value for value in values if type(value) is cst.Call]
