"""A loss by its use, whatever its class or variable is called: a callable instance whose call compares a
computed value with another operand and whose result is what a backward pass differentiates, and that is no
model (`LossUses.instance_used_as_loss`). The use half of the `losses` part (`calls/losses.py`, `LossIndex`,
which supplies the file's call sites; `calls/loss_sources.py` resolves a callee by what it is bound to and
asks this when nothing is).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from stabfix.model.calls.loss_operands import backpropagated, loss_term_calls
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import NAMES_AND_ATTRIBUTES

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ProjectQueries


class LossUses:
    """Mixed into `LossIndex`, which has the file's `sites`, `names`, `qualify`, `project`, `_bound_values`
    and `parameter_values`."""

    names: Names
    sites: list  # the index's `CallSite`s (`calls/losses.py`, which imports this module)
    project: Optional["ProjectQueries"]
    parameter_values: Optional[Callable[[Binding], Optional[list[cst.BaseExpression]]]]
    qualify: Callable[[cst.BaseExpression], Optional[str]]
    _bound_values: Callable[[cst.BaseExpression], list[cst.BaseExpression]]

    def __init__(self) -> None:
        self._terms: tuple[set[cst.Call], set[cst.Call]] | None = None  # the calls whose result a backward pass differentiates
        self._model_receivers: set[str | None] | None = None  # what `.parameters()`/`.train()`... is asked of

    def instance_used_as_loss(self, call: cst.Call) -> str | None:
        """The class of the callable instance `call` calls when the call is a loss by its use, whatever
        the class is called (`jaccard = SoftJaccard()`; `loss = 1 - jaccard(net(x), y); loss.backward()`):
        the call compares a computed value (a model's output) with another operand, its result is a term
        of what a backward pass differentiates (through arithmetic, reductions, bindings and the returns of
        this file's functions whose results are), and the instance is not itself a model: built from a
        class of the scanned tree that builds no layer, or from a class of a module outside the tree and
        outside torch whose result is backpropagated as it is, with no reduction on the way (a loss
        returns its value; a layer's output needs one), and no optimizer takes its parameters."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value
        positional = [arg for arg in call.args if not arg.star]
        if len(positional) < 2 or type(func) not in NAMES_AND_ATTRIBUTES:
            return None
        classes = {self._instance_class(value) for value in self._bound_values(func)}
        if len(classes) != 1 or None in classes or not self._computed(positional[0].value, 0):
            return None
        name, outside = classes.pop()  # type: ignore[misc]
        terms = self._backpropagated_terms()
        if call not in (terms[1] if outside else terms[0]) or self._trained(func):
            return None
        return name

    def _instance_class(self, value: cst.BaseExpression) -> tuple[str, bool] | None:
        """The class `value` constructs, and whether its body is outside the scanned tree: one of this
        file or another scanned file that builds no layer, or an imported class of a module outside torch
        (`from pytorch_msssim import MS_SSIM`)."""
        if type(value) is not cst.Call or type(value.func) not in NAMES_AND_ATTRIBUTES:
            return None
        if type(value.func) is cst.Name:
            bindings = self.names.bindings_of(value.func)
            if bindings and all(b.kind == "class" for b in bindings):
                return None if any(_builds_layers(self, b.node) for b in bindings) else (value.func.value, False)
        qualified = self.qualify(value.func)
        if qualified is None or "." not in qualified or qualified.startswith("torch."):
            return None
        last = qualified.rsplit(".", 1)[-1]
        if not last[:1].isupper():
            return None
        symbol = self.project.resolve(qualified) if self.project is not None else None
        if symbol is None:
            return qualified, True
        if symbol.kind != "class":
            return None
        layers = self.project.foreign(  # type: ignore[union-attr]
            qualified, lambda found: _builds_layers(found.model.losses, found.node), needs=("losses",), kinds=("class",))
        return (qualified, False) if layers is False else None

    def _computed(self, expr: cst.BaseExpression, depth: int) -> bool:
        """The operand is computed by a call (a model's output, a helper's result), not data fetched or
        only moved: `net(x)`, `out` bound to `self.head(h)`, `out.logits`, `torch.sigmoid(net(x))`."""
        if depth > 6:
            return False
        kind = type(expr)
        if kind is cst.Name:
            bindings = self.names.bindings_of(expr)  # type: ignore[arg-type]
            if len(bindings) == 1 and bindings[0].kind == "param":  # what every call of the file passes for it
                passed = self.parameter_values(bindings[0]) if self.parameter_values is not None else None
                return bool(passed) and all(self._computed(value, depth + 1) for value in passed)  # type: ignore[union-attr]
            return bool(bindings) and all(
                b.bound_value is not None and self._computed(b.bound_value, depth + 1) for b in bindings)
        if kind is cst.Attribute or kind is cst.Subscript:
            return self._computed(expr.value, depth + 1)  # type: ignore[attr-defined]
        if kind is not cst.Call:
            return False
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in _TENSOR_METHODS:
            return self._computed(func.value, depth + 1)
        qualified = self.qualify(func) or ""
        if qualified.startswith("torch."):
            return bool(expr.args) and self._computed(expr.args[0].value, depth + 1)  # type: ignore[attr-defined]
        return type(func) in NAMES_AND_ATTRIBUTES

    def _backpropagated_terms(self) -> tuple[set[cst.Call], set[cst.Call]]:
        """The calls of the file whose result is a term of what a backward pass differentiates (through
        reductions too, and through the returns of this file's functions whose calls are, three calls
        deep), and those among them whose result is one as it is (arithmetic and bindings only)."""
        if self._terms is None:
            sinks = [backpropagated(site.call) for site in self.sites
                     if type(site.call.func) is cst.Attribute and site.call.func.attr.value == "backward"]
            found: set[cst.Call] = set()
            whole: set[cst.Call] = set()
            followed: set[cst.FunctionDef] = set()
            for _ in range(3):
                new = loss_term_calls(sinks, self.names, self.qualify) - found
                found |= new
                for sink in sinks:
                    _unreduced_terms(self.names, sink, whole, 0)
                sinks = []
                for term in new:
                    definition = self.names.definition_of(term)
                    if definition is not None and definition not in followed:
                        followed.add(definition)
                        sinks.extend(self.names.returns.get(definition, ()))
                if not sinks:
                    break
            self._terms = (found, whole & found)
        return self._terms

    def _trained(self, func: cst.BaseExpression) -> bool:
        """The instance is trained or saved as a model: `Adam(crit.parameters())`, `crit.train()`."""
        if self._model_receivers is None:  # once per file, and only for a file with a candidate
            self._model_receivers = {
                dotted_name(site.call.func.value) for site in self.sites  # type: ignore[attr-defined]
                if type(site.call.func) is cst.Attribute and site.call.func.attr.value in _MODEL_METHODS}
        return dotted_name(func) in self._model_receivers


# tensor methods that keep the value they are called on (a move, a cast, a view, a reduction)
_TENSOR_METHODS = frozenset({
    "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "bool", "type", "type_as",
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "contiguous", "permute", "transpose", "detach",
    "clone", "expand", "expand_as", "repeat", "narrow", "chunk", "split", "mean", "sum", "sigmoid",
    "softmax", "log_softmax", "exp", "log", "abs", "clamp", "squeeze_", "unsqueeze_", "item",
})


# methods called on a model (trained, saved), not on a loss
_MODEL_METHODS = frozenset({"parameters", "named_parameters", "train", "state_dict", "load_state_dict", "zero_grad"})


def _unreduced_terms(names: Names, expr: cst.BaseExpression, found: set[cst.Call], depth: int) -> None:
    """The calls whose result is a term of `expr` as it is: through arithmetic and bindings, no reduction."""
    if depth > 12:
        return
    kind = type(expr)
    if kind is cst.BinaryOperation:
        _unreduced_terms(names, expr.left, found, depth + 1)  # type: ignore[attr-defined]
        _unreduced_terms(names, expr.right, found, depth + 1)  # type: ignore[attr-defined]
    elif kind is cst.UnaryOperation:
        _unreduced_terms(names, expr.expression, found, depth + 1)  # type: ignore[attr-defined]
    elif kind is cst.Name:
        for binding in names.bindings_of(expr):  # type: ignore[arg-type]
            value = binding.bound_value if binding.kind != "augment" else binding.value
            if value is not None:
                _unreduced_terms(names, value, found, depth + 1)
    elif kind is cst.Call:
        found.add(expr)  # type: ignore[arg-type]


def _builds_layers(index: "LossUses", cls: cst.CSTNode) -> bool:
    """A class of the file whose instances hold a torch layer or parameter (`self.fc = nn.Linear(...)`):
    a model, trained itself, not a loss applied to one."""
    if type(cls) is not cst.ClassDef:
        return True
    for bindings in index.names.self_attributes.get(cls, {}).values():
        for binding in bindings:
            value = binding.bound_value
            if type(value) is cst.Call:
                qualified = index.qualify(value.func) or ""
                if qualified.startswith("torch.nn.") and not qualified.endswith("Loss"):
                    return True
    return False
