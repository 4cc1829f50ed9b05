"""Which calls are loss computations, and which of their arguments is the target/reference.

This is the one definition of a loss every rule uses: the model part `losses` (`LossIndex`), built
once per file on the binding model and shared by every rule that asks about losses. Recognised:

* torch functional losses through any import alias (`F.mse_loss`, `from torch.nn.functional import
  smooth_l1_loss as sl1`), also when stored and called later (`self.loss_fn = F.smooth_l1_loss`);
* `torch.nn.*Loss` and user `*Loss` instances: local, module-level, stored on `self` in the same class,
  called through `.forward`, or constructed and called inline (`nn.MSELoss()(pred, y)`);
* classes of another scanned file derived from a torch loss (through `FileModel.project`): one that
  keeps the torch class's `forward` is that torch loss (`class SmoothCE(nn.CrossEntropyLoss)` built
  with other defaults), one with a `forward` of its own is a user loss;
* a callable instance by its use, whatever its class is called (`jaccard = SoftJaccard()`): its call
  compares a computed value with another operand and its result is backpropagated, and it is no model
  (`instance_used_as_loss`);
* user losses by what the callee is called (`energy_loss`, `criterion`, `self.loss_fn` received as an
  argument) or reached through a module or object holding losses (`losses.swd(x, ref)`), where no use
  decides;
* functions of the same file that use an argument as the target of a loss they compute
  (`helper_loss`);
* a parameter every call of its function in the file hands the same torch loss
  (`train(loader, net, opt, nn.L1Loss())`; `parameter_values`, set by the `summaries` part).

`computed_in_class(cls)`: a method of the class computes a loss (the class is built to be trained).

They take (prediction, reference) by convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from stabfix.model.calls.loss_sources import (  # noqa: F401  (re-exported: the one definition of a loss)
    LossCall,
    LossOperands,
    LossSources,
    identifier_words,
    is_loss_callee_name,
    is_loss_class_name,
    is_loss_like_name,
    is_torch_loss_function,
    loss_by_usage,
    operands,
    read_names,
    receiving_parameter,
)
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import NAMES_AND_ATTRIBUTES

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ProjectQueries


class LossIndex(LossSources, cst.BatchableCSTVisitor):
    """The model part `losses`: every call of the file, and which of them compute a loss with which
    operands. One per file, shared by every rule that asks about losses.

    The traversal only records where each call sits (its enclosing functions, whether it is test
    code); what a callee is gets resolved afterwards through the binding model (`LossSources`,
    `calls/loss_sources.py`), so `self.crit` called in a method above `__init__` still finds
    `self.crit = nn.MSELoss()`.
    """

    def __init__(
        self, imports: ImportTracker, enclosing: EnclosingDefinitions, names: Names, project: Optional["ProjectQueries"] = None
    ) -> None:
        cst.BatchableCSTVisitor.__init__(self)
        LossSources.__init__(self, imports, names, project)
        self.enclosing = enclosing
        self.module: cst.Module | None = None
        self.sites: list[CallSite] = []
        self._asserts = 0
        self._operands: dict[cst.Call, LossOperands | None] = {}
        self._tested: dict[cst.FunctionDef, list[CallSite]] | None = None  # function -> the sites calling it
        self._terms: tuple[set[cst.Call], set[cst.Call]] | None = None  # the calls whose result a backward pass differentiates
        self._model_receivers: set[str | None] | None = None  # what `.parameters()`/`.train()`... is asked of

    # -- traversal -----------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_Assert(self, node: cst.Assert) -> None:
        self._asserts += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self._asserts -= 1

    def visit_Call(self, node: cst.Call) -> None:
        functions = self.enclosing.enclosing_functions()
        in_test = (
            self._asserts > 0
            or any(_is_test_name(f.name.value) for f in functions)
            or any(c.name.value.startswith("Test") for c in self.enclosing.enclosing_classes())
        )
        outer: cst.FunctionDef | cst.Module | None = functions[0] if functions else self.module
        if not functions and self.enclosing.innermost_class() is not None:
            outer = None  # a class body is not a scope of its own for the rules
        self.sites.append(CallSite(node, functions, outer, in_test, self.names.position))

    # -- queries -------------------------------------------------------------------------------------
    def operands(self, call: cst.Call) -> LossOperands | None:
        """Prediction and target of a loss call (a same-file helper that uses an argument as a loss
        target counts as a loss of that argument); None when the call is not a loss."""
        if call not in self._operands:
            self._operands[call] = None  # a helper calling itself is not a loss of its own
            self._operands[call] = self._find_operands(call)
        return self._operands[call]

    def loss_sites(self) -> Iterator[tuple[CallSite, LossOperands]]:
        for site in self.sites:
            found = self.operands(site.call)
            if found is not None:
                yield site, found

    def computed_in_class(self, cls: cst.ClassDef) -> bool:
        """A method of `cls` (or a function nested in one) computes a loss: the class is built to be
        trained, by this file or another (`def loss_fn(self, logits, y): return self.criterion(logits, y)`)."""
        methods = {item for item in cls.body.body if isinstance(item, cst.FunctionDef)}
        return any(site.functions and site.functions[0] in methods for site, _ in self.loss_sites())

    def in_test_code(self, site: "CallSite") -> bool:
        """In an `assert` or a test function, or in a function of the file that only test code calls (a
        helper of the tests: comparing a loss of x with x there is a check too)."""
        return site.in_test or (bool(site.functions) and self._only_called_by_tests(site.functions[0], 0))

    def _only_called_by_tests(self, function: cst.FunctionDef, depth: int) -> bool:
        if depth > 4:
            return False
        if self._tested is None:  # the calls of each function of the file, once
            self._tested = {}
            for site in self.sites:
                callee = self.names.definition_of(site.call)
                if callee is not None:
                    self._tested.setdefault(callee, []).append(site)
        callers = self._tested.get(function, [])
        return bool(callers) and all(
            caller.in_test or (caller.functions and caller.functions[0] is not function
                               and self._only_called_by_tests(caller.functions[0], depth + 1))
            for caller in callers)

    def calls_in(self, function: cst.FunctionDef) -> list[cst.Call]:
        return [site.call for site in self.sites if function in site.functions]

    # -- a loss by its use -----------------------------------------------------------------------------
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
            from stabfix.model.calls.loss_operands import backpropagated, loss_term_calls

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


@dataclass(eq=False)
class CallSite:
    call: cst.Call
    functions: tuple[cst.FunctionDef, ...]  # the enclosing functions, outermost first
    outer: cst.FunctionDef | cst.Module | None  # outermost function, or the module; None in a class body
    in_test: bool  # inside an `assert` or a test function: comparing a loss of x with x is a check
    order: int = 0  # the binding model's position when the call starts (`Names.position`)


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


def _builds_layers(index: "LossIndex", cls: cst.CSTNode) -> bool:
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


def _is_test_name(name: str) -> bool:
    return name.startswith("test") or name.endswith("_test")
