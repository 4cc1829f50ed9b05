"""Which parameters an optimizer covers, and whether a gradient clear reaches them.

With several optimizers in one file (a GAN's `opt_g` and `opt_d`, a body and a head trained at different
rates), a clear of one optimizer's gradients says nothing about another's. The facts:

- `owners(constructor)`: the models whose `.parameters()`/`.named_parameters()` an optimizer
  constructor is handed (`Adam(G.parameters())`, `Adam(list(a.parameters()) + list(b.parameters()))`,
  `SGD([{"params": net.body.parameters(), "lr": lr}])`, `filter(lambda p: p.requires_grad, m.parameters())`),
  or None when anything else may supply tensors (a list held in a name, a helper's result): then what it
  covers is unknown.
- `GradCoverage.may_clear(clear, constructor)`: whether a gradient clear may empty gradients of the
  parameters the optimizer built by `constructor` steps. False only when the code proves the two apart:
  the clear is another optimizer's `zero_grad()` (or a model's) and every model on each side is known and
  none shares parameters with the other (the same model, or one a submodule spelling of the other:
  `model` and `model.head`). A clear of unknown reach (`p.grad = None` in a loop, a helper, an optimizer
  of unknown parameters, a model that is a name's alias of another object) may clear anything.

Unknown is never proof: these answers only ever remove clears from a rule's view when the code shows
they cannot reach the stepped parameters.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.optimizers import OptimizerTracker, Scope
from stabfix.model.flow.parameters import shares_parameters
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names

_PARAMETER_METHODS = ("parameters", "named_parameters")
# Calls that pass on the tensors of what they are handed (a `filter` predicate only removes some).
_PASSING = frozenset({"list", "tuple", "filter", "sorted", "reversed", "iter", "chain", "itertools.chain"})
# Bindings that make a name a fresh object of its own rather than another name for part of a model.
_ALIASING = (cst.Name, cst.Attribute, cst.Subscript)


def owners(constructor: Optional[cst.Call]) -> Optional[list[cst.BaseExpression]]:
    """The models whose parameters an optimizer constructor gets, when they are all it gets."""
    if constructor is None:
        return None
    params = next((arg.value for arg in constructor.args if arg.keyword and arg.keyword.value == "params"), None)
    if params is None:
        positional = [arg.value for arg in constructor.args if arg.keyword is None and not arg.star]
        params = positional[0] if positional else None
    found: list[cst.BaseExpression] = []
    if params is None or not _collect(params, found) or not found:
        return None
    return found


def _collect(node: cst.BaseExpression, found: list[cst.BaseExpression]) -> bool:
    """Adds the models `node` takes parameters from; False when something else may supply tensors."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETER_METHODS:
            found.append(func.value)
            return dotted_name(func.value) is not None
        if dotted_name(func) not in _PASSING:
            return False
        values = [arg.value for arg in node.args if arg.keyword is None and not isinstance(arg.value, cst.Lambda)]
        return bool(values) and all(_collect(value, found) for value in values)
    if isinstance(node, (cst.List, cst.Tuple)):
        return all(_collect(element.value, found) for element in node.elements)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _collect(node.left, found) and _collect(node.right, found)
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)) and node.for_in.inner_for_in is None:
        return _collect(node.for_in.iter, found)  # `[p for p in model.parameters() if p.requires_grad]`
    if isinstance(node, cst.Dict):
        groups = [element.value for element in node.elements if isinstance(element, cst.DictElement) and _is_params_key(element.key)]
        return len(groups) == 1 and _collect(groups[0], found)
    return False


def _is_params_key(key: cst.BaseExpression) -> bool:
    return isinstance(key, cst.SimpleString) and key.evaluated_value == "params"


class GradCoverage:
    """Whether a clear may reach the parameters an optimizer steps (a query, not a traversal part)."""

    def __init__(self, optimizers: OptimizerTracker, names: Names, constructors: list[cst.Call]) -> None:
        self.optimizers = optimizers
        self.names = names
        # Every model some optimizer of the file trains: a clear of one of these is a model's clear.
        self._trained = [model for call in constructors for model in owners(call) or []]

    def may_clear(self, receiver: cst.BaseExpression, how: str, scope: Scope, constructor: Optional[cst.Call]) -> bool:
        """`receiver.zero_grad()` (`how == "zero_grad"`) may empty gradients of what `constructor` built."""
        stepped = self._known_models(owners(constructor))
        if stepped is None or how != "zero_grad":
            return True
        cleared_optimizer = self.optimizers.resolve(receiver, scope)
        if cleared_optimizer is not None:
            if cleared_optimizer.constructor is constructor:
                return True
            cleared = self._known_models(owners(cleared_optimizer.constructor))
        else:
            cleared = self._known_models([receiver]) if self._is_trained_model(receiver) else None
        if cleared is None:
            return True
        return shares_parameters(set(stepped), frozenset(cleared))

    def _is_trained_model(self, receiver: cst.BaseExpression) -> bool:
        spelled = dotted_name(receiver)
        return spelled is not None and any(
            shares_parameters({spelled}, frozenset({dotted_name(model) or ""})) for model in self._trained
        )

    def _known_models(self, models: Optional[list[cst.BaseExpression]]) -> Optional[list[str]]:
        """Their spellings, when each is a model of its own (not a name for part of another one)."""
        if not models:
            return None
        spelled = []
        for model in models:
            name = dotted_name(model)
            if name is None or name == "self" or self._may_alias(model):
                return None
            spelled.append(name)
        return spelled

    def _may_alias(self, model: cst.BaseExpression) -> bool:
        """`D = G.disc`, `net = model`: the name may stand for (part of) another model."""
        root = model
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value == "self":
            return False
        bindings = self.names.bindings_of(root)
        return any(isinstance(b.bound_value, _ALIASING) for b in bindings)
