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

- `backward_reach(loss, names, qualify)`: the models whose parameters a backward of `loss` can give
  gradients to, when the code shows every path the loss is computed on: calls of modules (`model(x)`,
  `model.forward(x)`; what they are handed is their input), tensor methods with constant arguments
  (`.sum()`, `.mean(dim=1)`, `.float()`), and arithmetic with constants, through names (every reaching
  binding); `loss = model(x).sum()` reaches `{"model"}`. None when anything else may carry history (a
  loss function of a target, an unknown call, a parameter of the function). A clear of every model in
  it (`model.zero_grad()`) empties every gradient that backward made, whatever optimizer steps next.

Unknown is never proof: these answers only ever remove clears from a rule's view when the code shows
they cannot reach the stepped parameters.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.optimizers import OptimizerTracker, Scope
from stabfix.model.flow.parameters import instance_receivers, shares_parameters
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
    if type(node) is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _PARAMETER_METHODS:
            found.append(func.value)
            return dotted_name(func.value) is not None
        if dotted_name(func) not in _PASSING:
            return False
        values = [arg.value for arg in node.args if arg.keyword is None and type(arg.value) is not cst.Lambda]
        return bool(values) and all(_collect(value, found) for value in values)
    if type(node) in (cst.List, cst.Tuple):
        return all(_collect(element.value, found) for element in node.elements)
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
        return _collect(node.left, found) and _collect(node.right, found)
    if type(node) in (cst.ListComp, cst.GeneratorExp) and node.for_in.inner_for_in is None:
        return _collect(node.for_in.iter, found)  # `[p for p in model.parameters() if p.requires_grad]`
    if type(node) is cst.Dict:
        groups = [element.value for element in node.elements if type(element) is cst.DictElement and _is_params_key(element.key)]
        return len(groups) == 1 and _collect(groups[0], found)
    return False


def _is_params_key(key: cst.BaseExpression) -> bool:
    return type(key) is cst.SimpleString and key.evaluated_value == "params"


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
        return shares_parameters(set(stepped), frozenset(cleared), instance_receivers(
            self.names, constructor, cleared_optimizer.constructor if cleared_optimizer is not None else receiver))

    def _is_trained_model(self, receiver: cst.BaseExpression) -> bool:
        spelled = dotted_name(receiver)
        return spelled is not None and any(
            shares_parameters({spelled}, frozenset({dotted_name(model) or ""}), instance_receivers(self.names, receiver, model))
            for model in self._trained
        )

    def _known_models(self, models: Optional[list[cst.BaseExpression]]) -> Optional[list[str]]:
        """Their spellings, when each is a model of its own (not a name for part of another one)."""
        if not models:
            return None
        spelled = []
        for model in models:
            name = dotted_name(model)
            if name is None or self._is_instance(model) or self._may_alias(model):
                return None
            spelled.append(name)
        return spelled

    def _is_instance(self, expr: cst.BaseExpression) -> bool:
        """`self` (whatever the method calls its instance): the whole object, every model it holds."""
        return type(expr) is cst.Name and self.names.receiver_class(expr) is not None

    def _may_alias(self, model: cst.BaseExpression) -> bool:
        """`D = G.disc`, `net = model`: the name may stand for (part of) another model."""
        root = model
        while type(root) is cst.Attribute:
            root = root.value
        if type(root) is not cst.Name or self._is_instance(root):
            return False
        bindings = self.names.bindings_of(root)
        return any(isinstance(b.bound_value, _ALIASING) for b in bindings)


_MAX_REACH_DEPTH = 12


def backward_reach(loss: cst.BaseExpression, names: Names, qualify, depth: int = 0) -> Optional[frozenset[str]]:
    if depth > _MAX_REACH_DEPTH:
        return None
    if type(loss) in (cst.Integer, cst.Float):
        return frozenset()
    if type(loss) is cst.UnaryOperation:
        return backward_reach(loss.expression, names, qualify, depth + 1)
    if type(loss) is cst.BinaryOperation:
        left = backward_reach(loss.left, names, qualify, depth + 1)
        right = backward_reach(loss.right, names, qualify, depth + 1)
        return None if left is None or right is None else left | right
    if type(loss) is cst.Name:
        bindings = names.reaching(loss)
        if not bindings or any(b.kind != "assign" or b.bound_value is None for b in bindings):
            return None  # a parameter, a loop target, an unpacked element: not shown
        found: frozenset[str] = frozenset()
        for binding in bindings:
            reach = backward_reach(binding.bound_value, names, qualify, depth + 1)  # type: ignore[arg-type]
            if reach is None:
                return None
            found |= reach
        return found
    if type(loss) is not cst.Call:
        return None
    func = loss.func
    module = func.value if type(func) is cst.Attribute and func.attr.value == "forward" else func
    if qualify(func) is None and type(module) is cst.Name and _a_module(module, names):
        return frozenset({module.value})  # `model(x)`: what it is handed is its input
    if type(func) is cst.Attribute and qualify(func) is None and all(_constant(arg.value) for arg in loss.args):
        return backward_reach(func.value, names, qualify, depth + 1)  # `.sum()`, `.mean(dim=1)`, `.float()`
    return None


def _a_module(name: cst.Name, names: Names) -> bool:
    """A name called as a model: a parameter of the function, or bound to a constructed object (not to a
    function of the file, a lambda or a value computed from tensors)."""
    bindings = names.reaching(name)
    return bool(bindings) and all(b.kind == "param" or _constructs_module(b.bound_value, names) for b in bindings)


def _constructs_module(value: Optional[cst.BaseExpression], names: Names) -> bool:
    """`Net()` of a model class of the file, or a `torch.nn` module class."""
    if type(value) is not cst.Call:
        return False
    callee = names.instance_of(value)
    if callee is None:
        return False
    if callee.kind == "library":
        return (callee.qualified or "").startswith("torch.nn.")
    return callee.module_class is not None or callee.kind == "class"


def _constant(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.UnaryOperation:
        expr = expr.expression
    if type(expr) in (cst.Tuple, cst.List):
        return all(_constant(element.value) for element in expr.elements)
    return type(expr) in (cst.Integer, cst.Float, cst.SimpleString) or (
        type(expr) is cst.Name and expr.value in ("True", "False", "None"))
