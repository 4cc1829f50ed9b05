"""Whether an optimizer's step moves the tensors that an in-place update changes.

Answers "are these tensors this optimizer's parameters?" for an update of `events` (a `ParamUpdate`, with
the loops over parameters it sits in from `flow/parameters.py`): `trains(optimizer, loops, update, spelled)`
is False when the file shows they are not (one tensor the constructor was not built with, nor an
attribute of a model it was built from; a held list it was not built from; a loop over other optimizers'
`param_groups`; models whose parameters it shares none of; a model whose gradients the function clears
apart from the optimizer's, `optimizer.zero_grad(); adversary.zero_grad()`: trained by hand), and
`owns(optimizer, spelled, loops, update)` gives positive evidence that they are (the tensor among its
constructor's arguments, its own `param_groups` read, the models it was built from). `spelled` is the
optimizer as written at the step. Built on `names` and `events_through_calls` (SF402).
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.calls.events import ClearGrad, ParamUpdate
from stabfix.model.calls.optimizers import OptimizerInfo
from stabfix.model.flow.parameters import (
    ParameterLoops,
    builds_from,
    instance_receivers,
    models_in,
    names_in,
    owned_attribute,
    reads_param_groups,
    shares_parameters,
)
from stabfix.model.source.imports import dotted_name


class OptimizerTensors:
    def __init__(self, names, events_through_calls) -> None:
        self._names = names
        self._events = events_through_calls

    def trains(self, optimizer: OptimizerInfo, loops: ParameterLoops, update: ParamUpdate, spelled: cst.BaseExpression) -> bool:
        """False when the file shows that the updated tensors are not this optimizer's parameters."""
        constructor, origin = optimizer.constructor, loops.origin
        receivers = self._receivers(constructor, update, loops)
        if loops.single:  # one tensor: the optimizer was built with it, or with its model's parameters
            return constructor is not None and (
                update.param in names_in(constructor) or owned_attribute(update.param, models_in(constructor), receivers)
            )
        if origin.held_list is not None:
            return constructor is not None and builds_from(constructor, origin.held_list)
        if origin.optimizers:
            stepped = dotted_name(spelled)
            return stepped is None or stepped in origin.optimizers or optimizer.expression in origin.optimizers
        if origin.models and constructor is None and self._managed_apart(origin.models, spelled, update):
            return False
        if origin.models and constructor is not None:
            trained = models_in(constructor)
            if trained and "" not in origin.models:
                return shares_parameters(trained, origin.models, receivers)
        return True

    def owns(self, optimizer: OptimizerInfo, spelled: cst.BaseExpression, loops: ParameterLoops, update: ParamUpdate) -> bool:
        """Positive evidence that the tensors are the stepped optimizer's own (needed for a -grad update)."""
        if loops.single:
            return True  # `trains` found the tensor among the optimizer's constructor arguments
        stepped = dotted_name(spelled)
        if stepped is not None and (
            stepped in loops.origin.optimizers
            or reads_param_groups(update.node, stepped, loops.chain, self._names)
        ):
            return True
        if optimizer.constructor is not None and loops.origin.models:
            return shares_parameters(models_in(optimizer.constructor), loops.origin.models,
                                     self._receivers(optimizer.constructor, update, loops))
        return False

    def _receivers(self, constructor: cst.Call | None, update: ParamUpdate, loops: ParameterLoops) -> frozenset[str]:
        """What the methods building the optimizer and updating the tensors call their instance."""
        return instance_receivers(self._names, constructor, update.node, *loops.chain)

    def _managed_apart(self, models: frozenset[str], spelled: cst.BaseExpression, update: ParamUpdate) -> bool:
        """The function clears the optimizer's gradients and, separately, the updated model's
        (`optimizer.zero_grad(); adversary.zero_grad()`): that model is trained by hand, not by this
        optimizer (gradient descent-ascent, a manually updated critic)."""
        here = self._events.in_function(update.site.function)
        cleared = {dotted_name(e.receiver) for e in here if isinstance(e, ClearGrad) and e.how == "zero_grad"}
        return dotted_name(spelled) in cleared and "" not in models and all(model in cleared for model in models)
