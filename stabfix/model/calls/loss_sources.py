"""Where a loss comes from: what a call's callee is as a loss (a torch loss function or class through any
alias, a criterion object held in a name or on `self`, a class of another scanned file derived from a
torch loss, a user loss by what it is called), and a helper function of this file or another that uses
one of its arguments as a loss target. `LossSources` is the resolution half of the `losses` part
(`calls/losses.py`, `LossIndex`, which records the file's calls and indexes the losses among them).

They take (prediction, reference) by convention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import NAMES_AND_ATTRIBUTES, node_code
from stabfix.model.source.node_fields import code_children

if TYPE_CHECKING:
    from stabfix.model.source.project_view import ProjectQueries

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@lru_cache(maxsize=4096)
def identifier_words(name: str) -> tuple[str, ...]:
    """`x_style_ref` -> (x, style, ref); `PatchSWDLoss` -> (patch, swd, loss)."""
    return tuple(match.group(0).lower() for match in _CAMEL.finditer(name))


def is_loss_like_name(name: str) -> bool:
    """A variable or container whose name says it holds a loss value: `loss`, `style_loss`, `loss_dict`."""
    words = identifier_words(name.rsplit(".", 1)[-1])
    return any(w in vocab.LOSS_WORDS for w in words) and not any(w in vocab.NOT_A_LOSS_VALUE_WORDS for w in words)


def is_loss_callee_name(name: str) -> bool:
    """A function or callable attribute whose name says it computes a loss: `energy_loss`, `criterion`."""
    last = name.rsplit(".", 1)[-1]
    words = identifier_words(last)
    return (
        not last[:1].isupper()  # `StyleLoss(...)` constructs the module
        and any(w in vocab.LOSS_WORDS for w in words)
        and not any(w in vocab.NOT_A_LOSS_CALL_WORDS for w in words)
    )


# Methods of a list or dict named for losses (`losses.append(loss)`): they store, not compute.
_CONTAINER_METHODS = frozenset({"extend", "insert", "setdefault", "pop", "items", "keys", "index", "count", "remove"})
# torch losses whose name does not end in `_loss`
_TORCH_LOSS_FUNCTIONS = frozenset(
    {"cross_entropy", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss"}
)

# Position of the target argument, for losses where it is not the second one. (`cosine_embedding_loss(
# input1, input2, y)` compares two embeddings; the second is the reference, `y` only says +1/-1.)
_TARGET_INDEX = {
    "margin_ranking_loss": 2,
    "MarginRankingLoss": 2,
    "triplet_margin_loss": None,  # anchor/positive/negative: no single target
    "TripletMarginLoss": None,
    "TripletMarginWithDistanceLoss": None,
}
_TARGET_KEYWORDS = ("target", "targets", "y", "reference", "ref")
_INPUT_KEYWORDS = ("input", "pred", "prediction", "x", "output")


@dataclass(frozen=True)
class LossCall:
    call: cst.Call
    display: str  # how the callee is spelled, for messages
    library: bool  # a torch loss: operand positions are known
    kind: str  # qualified function/class name or the user's callee name
    by_usage: bool = False  # recognised from how its result is used, not from its name


def loss_by_usage(call: cst.Call) -> LossCall:
    """A call taken for a user loss because its result is a term of what is backpropagated."""
    code = node_code(call.func)
    display = code if len(code) <= 40 else "loss"
    return LossCall(call, display, False, display, by_usage=True)


@dataclass(frozen=True)
class LossOperands:
    call: cst.Call
    loss_name: str  # for messages: `F.mse_loss`, `self.criterion`
    prediction: cst.BaseExpression | None
    target: cst.BaseExpression | None
    kind: str = ""  # qualified name of the loss function or class (`torch.nn.MSELoss`), as far as known
    # the target is known to be one: a torch loss, or a function of this file that uses it as a loss target
    checked: bool = False


def is_loss_class_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.endswith("Loss") and last[:1].isupper()


def is_torch_loss_function(qualified: str) -> bool:
    """`torch.nn.functional.mse_loss`, `torch.nn.functional.cross_entropy` (not `torch.nn.MSELoss`)."""
    last = qualified.rsplit(".", 1)[-1]
    return qualified.startswith("torch.") and (last.endswith("_loss") or last in _TORCH_LOSS_FUNCTIONS)


def _holds_losses(receiver: cst.BaseExpression) -> bool:
    """A module or object whose name says it holds loss functions: `losses`, `self.criteria`."""
    name = dotted_name(receiver)
    words = set(identifier_words(name.rsplit(".", 1)[-1])) if name else set()
    return bool(words) and words <= vocab.LOSS_WORDS


def _argument(call: cst.Call, index: int | None, keywords: tuple[str, ...]) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            return arg.value
    if index is None:
        return None
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[index].value if index < len(positional) else None


def operands(call: cst.Call, kind_name: str, display: str, checked: bool = False) -> LossOperands | None:
    last = kind_name.rsplit(".", 1)[-1]
    index = _TARGET_INDEX.get(last, 1)
    if last in _TARGET_INDEX and index is None:
        return None
    return LossOperands(
        call=call,
        loss_name=display,
        prediction=_argument(call, 0, _INPUT_KEYWORDS),
        target=_argument(call, index, _TARGET_KEYWORDS),
        kind=kind_name,
        checked=checked,
    )


class LossSources:
    """What a call computes as a loss, and the helpers that compute one (the resolution half of
    `LossIndex`, which supplies `calls_in`)."""

    def __init__(self, imports: ImportTracker, names: Names, project: Optional["ProjectQueries"] = None) -> None:
        self.imports = imports
        self.names = names
        self.project = project
        self._resolved: dict[int, tuple[cst.Call, LossCall | None]] = {}  # id(call) -> (the call, `resolve`'s answer)
        self._roles: dict[tuple[cst.FunctionDef, str], str | None] = {}
        self._callee_names: dict[str, tuple[bool, bool]] = {}  # a callee's name -> `_loss_callee`'s reading of it
        # another file's function -> its positional parameters and those it uses as a loss target
        self._foreign_roles: dict[str, Optional[tuple[tuple[str, ...], frozenset[str]]]] = {}
        # what every call of the file passes for a parameter (set by the `summaries` part; None: not followed)
        self.parameter_values: Optional[Callable[[Binding], Optional[list[cst.BaseExpression]]]] = None

    def calls_in(self, function: cst.FunctionDef) -> list[cst.Call]:
        raise NotImplementedError  # the index's: the calls of the file inside `function`

    def instance_used_as_loss(self, call: cst.Call) -> str | None:
        return None  # the index's: the class of a callable instance whose call result is backpropagated

    def resolve(self, call: cst.Call) -> LossCall | None:
        """The loss `call` computes, by what its callee is; None when it is not a loss."""
        known = self._resolved.get(id(call))
        if known is None or known[0] is not call:
            known = self._resolved[id(call)] = (call, self._resolve(call))
        return known[1]

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """What an expression names through the imports, honouring local shadowing."""
        if type(expr) in NAMES_AND_ATTRIBUTES and _root(expr) in self.names.uses:
            return self.names.qualify(expr)
        return self.imports.qualify(expr)

    def self_class(self, receiver: cst.BaseExpression) -> cst.ClassDef | None:
        """The class whose instance `receiver` is when it is a method's own first parameter (`self`)."""
        use = self.names.uses.get(receiver) if type(receiver) is cst.Name else None  # type: ignore[arg-type]
        if use is None:
            return None
        scope = use.scope.resolving(receiver.value)  # type: ignore[attr-defined]
        function = scope.node
        if type(function) is not cst.FunctionDef or scope.parent is None or not scope.parent.is_class:
            return None
        if _first_parameter(function) != receiver.value or _is_static(function):
            return None
        if any(b.kind != "param" for b in scope.bindings.get(receiver.value, ())):
            return None  # `self` re-bound
        return scope.parent.node  # type: ignore[return-value]

    def constructor_name(self, value: cst.BaseExpression) -> str | None:
        """The loss class a value constructs, if it does."""
        if type(value) is not cst.Call:
            return None
        qualified = self.qualify(value.func)
        name = qualified or dotted_name(value.func)
        if name is not None and is_loss_class_name(name):
            return name
        return self._derived_loss_class(qualified) if qualified is not None else None

    def _derived_loss_class(self, qualified: str) -> str | None:
        """A class of another scanned file that derives from a torch loss: the torch class when no class
        on the way overrides `forward` (it computes that loss), else the class itself (a user loss)."""
        if self.project is None or qualified.startswith("torch."):
            return None
        overridden = False
        for name, methods in self.project.lineage(qualified):
            if methods is None:  # outside the tree: torch's, or unknown
                if _is_torch_loss_base(name):
                    return qualified if overridden or name.rsplit(".", 1)[-1].startswith("_") else name
                continue
            overridden = overridden or "forward" in methods
        return None

    def held(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        """The loss a name or `self` attribute is bound to: `crit = nn.MSELoss()`, `self.swd = SWDLoss()`,
        `self.loss_fn = F.smooth_l1_loss`, `loss_fn = self.criterion`."""
        if depth > 4:
            return None
        kind = type(expr)  # exact types (libcst has no subclass of them): every callee of the file is asked
        if kind is cst.Name:
            bindings = self.names.bindings_of(expr)  # type: ignore[arg-type]  # read once for both questions
            passed = self._passed_loss(bindings, depth)
            if passed is not None:
                return passed
        elif kind is cst.Attribute:
            owner = self.self_class(expr.value)  # type: ignore[attr-defined]
            if owner is None:
                return None
            bindings = self.names.attribute_bindings(owner, expr.attr.value)  # type: ignore[attr-defined]
        else:
            return None
        for value in [b.bound_value for b in bindings if b.bound_value is not None]:
            loss = self.constructor_name(value)
            if loss is None and type(value) is cst.Call:
                loss = self.returned_loss(value, depth)  # `criterion = make_criterion()`
            if loss is None and type(value) in NAMES_AND_ATTRIBUTES:
                qualified = self.qualify(value)
                loss = qualified if qualified is not None and is_torch_loss_function(qualified) else None
                loss = loss or self.held(value, depth + 1)
            if loss is not None:
                return loss
        return None

    def returned_loss(self, call: cst.Call, depth: int = 0) -> str | None:
        """The loss object a call of a function of this file (a method on `self` or on an instance it
        builds, too) or of another scanned file hands back, when every `return` of it holds the same one:
        `def make_criterion(): return nn.CrossEntropyLoss()`."""
        if depth > 4:
            return None
        resolved = self._definition(call)
        if resolved is not None:
            return _one_returned_loss(self, resolved[0], depth + 1)
        qualified = self.qualify(call.func) if type(call.func) in NAMES_AND_ATTRIBUTES else None
        if self.project is None or qualified is None or qualified.startswith("torch."):
            return None
        symbol = self.project.resolve(qualified)
        if symbol is None or symbol.kind != "def":
            return None
        return self.project.foreign(
            qualified, lambda found: _one_returned_loss(found.model.losses, found.node, 0), needs=("losses",)
        )

    def _passed_loss(self, bindings: list[Binding], depth: int) -> str | None:
        """The loss a parameter (a name with these `bindings`) holds when every call of its function in the
        file passes the same one (`train(loader, net, opt, nn.L1Loss())` makes `l1(...)` in `def train(loader,
        net, opt, l1)` L1Loss)."""
        if self.parameter_values is None or len(bindings) != 1 or bindings[0].kind != "param":
            return None
        passed = self.parameter_values(bindings[0])
        if not passed:
            return None
        found = {self.constructor_name(value) or self.held(value, depth + 1) for value in passed}
        return found.pop() if len(found) == 1 and None not in found else None

    def _bound_values(self, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
        if type(expr) is cst.Name:
            bindings = self.names.bindings_of(expr)
        elif type(expr) is cst.Attribute:
            owner = self.self_class(expr.value)
            bindings = self.names.attribute_bindings(owner, expr.attr.value) if owner is not None else []
        else:
            return []
        return [b.bound_value for b in bindings if b.bound_value is not None]

    def _resolve(self, call: cst.Call) -> LossCall | None:
        func = call.func
        if type(func) is cst.Call:  # `nn.MSELoss()(pred, target)`
            loss_class = self.constructor_name(func)
            if loss_class is None:
                return None
            shown = dotted_name(func.func) or loss_class
            return LossCall(call, f"{shown}()", loss_class.startswith("torch."), loss_class)
        if type(func) is cst.Attribute and func.attr.value == "forward":
            held = self.held(func.value)  # `criterion.forward(pred, target)`
            if held is not None:
                return LossCall(call, _display(func), held.startswith("torch."), held)
        held = self.held(func)
        if held is not None:
            return LossCall(call, _display(func), held.startswith("torch."), held)
        used = self.instance_used_as_loss(call)
        if used is not None:
            return LossCall(call, _display(func), False, used)
        qualified = self.qualify(func)
        if qualified is not None:
            last = qualified.rsplit(".", 1)[-1]
            if is_loss_class_name(qualified):
                return None  # constructing the module, not computing the loss
            if qualified.startswith("torch."):
                return LossCall(call, _display(func), True, qualified) if is_torch_loss_function(qualified) else None
            # `from . import losses; losses.swd(a, b)`: a function of a project module of losses
            if self._loss_callee(last, func):
                return LossCall(call, _display(func), False, qualified)
            return None
        if type(func) is cst.Name and self._loss_callee(func.value, None):
            return LossCall(call, _display(func), False, func.value)
        if (
            type(func) is cst.Attribute
            and type(func.value) in NAMES_AND_ATTRIBUTES
            and self._loss_callee(func.attr.value, func)
        ):
            return LossCall(call, _display(func), False, func.attr.value)
        return None

    def _loss_callee(self, name: str, func: cst.BaseExpression | None) -> bool:
        """A callee named for a loss, or a method of a module or object holding losses (`losses.swd`) that is
        not a container method. What the name says is read once per name (every call of the file asks)."""
        said = self._callee_names.get(name)
        if said is None:
            words = set(identifier_words(name))
            said = self._callee_names[name] = (
                is_loss_callee_name(name) or name in _TORCH_LOSS_FUNCTIONS,
                not name[:1].isupper() and not name.startswith("_")
                and not words & (vocab.NOT_A_LOSS_CALL_WORDS | _CONTAINER_METHODS),
            )
        return said[0] or (said[1] and type(func) is cst.Attribute and _holds_losses(func.value))

    def _plain_operands(self, call: cst.Call) -> LossOperands | None:
        loss = self.resolve(call)
        return operands(call, loss.kind, loss.display, loss.kind.startswith("torch.")) if loss is not None else None

    def _find_operands(self, call: cst.Call) -> LossOperands | None:
        found = self._plain_operands(call)
        if found is None:
            return self._helper_loss(call)
        if found.target is None:
            return found
        resolved = self._definition(call)
        if resolved is None:
            return found
        definition, skip = resolved
        parameter = receiving_parameter(call, found.target, definition, skip)
        role = self.parameter_role(definition, parameter) if parameter is not None else None
        if role == "input":
            return replace(found, target=None)  # `def make_loss(model, x): return (model(x) - ref)...`
        return replace(found, checked=True) if role == "target" else found

    def _definition(self, call: cst.Call) -> tuple[cst.FunctionDef, int] | None:
        """The function of this file a call runs, with the leading parameters it does not pass (`self`)."""
        definition = self.names.definition_of(call)
        if definition is None:
            on_instance = method_of_instance(self.names, call)  # `Steps().run(pred, y)`
            return (on_instance, 0 if _is_static(on_instance) else 1) if on_instance is not None else None
        scope = self.names.scopes.get(definition)
        is_method = scope is not None and scope.parent is not None and scope.parent.is_class
        skip = 1 if is_method and type(call.func) is cst.Attribute and not _is_static(definition) else 0
        return definition, skip

    def _helper_loss(self, call: cst.Call) -> LossOperands | None:
        """A call of a function of this file that computes a loss with one of its arguments as the target:
        `def fit_term(pred, ref): return F.l1_loss(pred, ref)` makes `fit_term(model(x), y)` a loss of `y`."""
        resolved = self._definition(call)
        if resolved is None:
            return self._foreign_helper_loss(call)
        definition, skip = resolved
        for arg in call.args:
            parameter = receiving_parameter(call, arg.value, definition, skip)
            if parameter is not None and self.parameter_role(definition, parameter) == "target":
                display = dotted_name(call.func) or definition.name.value
                prediction = next((a.value for a in call.args if a is not arg and a.keyword is None), None)
                return LossOperands(call, display, prediction, arg.value, definition.name.value, checked=True)
        return None

    def target_keeps_grad(self, loss: LossOperands) -> bool:
        """Whether the tensor passed as the target is itself the target inside a helper of this file that
        computes the loss (`F.mse_loss(pred, ref)`, not `F.nll_loss(logp, torch.argmax(ref, 1))`); True
        for any other loss (its target expression is the caller's to read)."""
        resolved = self._definition(loss.call) if loss.target is not None else None
        if resolved is None or self._plain_operands(loss.call) is not None:
            return True
        definition, skip = resolved
        parameter = receiving_parameter(loss.call, loss.target, definition, skip)  # type: ignore[arg-type]
        return parameter is None or _target_keeps_grad(self, definition, parameter)

    def _foreign_helper_loss(self, call: cst.Call) -> LossOperands | None:
        """The same for a function of another scanned file (`from .helpers import fit_term`), by that file's
        answer about its parameters. Not known to be safe to fix from here: another file holds the loss."""
        if self.project is None:
            return None
        qualified = self.qualify(call.func) if type(call.func) in NAMES_AND_ATTRIBUTES else None
        if qualified is None or qualified.startswith("torch."):
            return None
        if qualified not in self._foreign_roles:  # a helper is called many times: its file is asked once
            symbol = self.project.resolve(qualified)
            # parse another file only for a function of it
            self._foreign_roles[qualified] = (self.project.foreign(qualified, _parameter_roles, needs=("losses",))
                                              if symbol is not None and symbol.kind == "def" else None)
        roles = self._foreign_roles[qualified]
        if not roles:
            return None
        positional, targets = roles
        index = 0
        for arg in call.args:
            if arg.star:
                return None
            parameter = arg.keyword.value if arg.keyword is not None else (positional[index] if index < len(positional) else None)
            index += arg.keyword is None
            if parameter in targets:
                prediction = next((a.value for a in call.args if a is not arg and a.keyword is None), None)
                return LossOperands(call, dotted_name(call.func) or qualified, prediction, arg.value, qualified)
        return None

    def parameter_role(self, node: cst.FunctionDef, parameter: str) -> str | None:
        """What a parameter of a user loss function is, by the function's own body.

        "target": it (or a value derived from it) is the target of a loss computed inside;
        "input": it only reaches the prediction side of the losses inside, or it is fed to a model the
        function receives as another parameter (`model(x)`); None: the body does not say.
        """
        key = (node, parameter)
        if key not in self._roles:
            self._roles[key] = None  # recursion guard
            self._roles[key] = self._parameter_role(node, parameter)
        return self._roles[key]

    def _parameter_role(self, node: cst.FunctionDef, parameter: str) -> str | None:
        derived = {parameter}
        # what each binding's value reads, once for the whole fixpoint
        bindings = [(b, read_names(b.value)) for b in self.names.bindings_within(node) if b.value is not None]
        changed = True
        while changed:
            changed = False
            for binding, reads in bindings:
                if binding.name not in derived and reads & derived:
                    derived.add(binding.name)
                    changed = True
        calls = self.calls_in(node)
        in_target = in_prediction = False
        for call in calls:
            inner = self._plain_operands(call)
            if inner is None:
                continue
            if inner.target is not None and read_names(inner.target) & derived:
                in_target = True
            if inner.prediction is not None and read_names(inner.prediction) & derived:
                in_prediction = True
        if in_target:
            return "target"
        if in_prediction:
            return "input"
        callables = {p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)}
        callables -= derived
        for call in calls:
            if type(call.func) is cst.Name and call.func.value in callables:
                if any(read_names(arg.value) & derived for arg in call.args):
                    return "input"
        return None


def _display(func: cst.BaseExpression) -> str:
    """How a loss call's callee is shown (spelled only for the calls that are losses, not for every call)."""
    return dotted_name(func) or "loss"


def _is_torch_loss_base(qualified: str) -> bool:
    """`torch.nn.CrossEntropyLoss`, `torch.nn.modules.loss._WeightedLoss`."""
    last = qualified.rsplit(".", 1)[-1]
    return qualified.startswith("torch.nn.") and last.endswith("Loss") and last.lstrip("_")[:1].isupper()


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    while type(expr) is cst.Attribute:  # exact types (see node_fields.node_kinds)
        expr = expr.value
    return expr


def _first_parameter(node: cst.FunctionDef) -> str:
    params = list(node.params.posonly_params) + list(node.params.params)
    return params[0].name.value if params else ""


def _is_static(node: cst.FunctionDef) -> bool:
    return any(
        (dotted_name(decorator.decorator) or "").rsplit(".", 1)[-1] == "staticmethod" for decorator in node.decorators
    )


def _one_returned_loss(sources: "LossSources", node, depth: int) -> str | None:
    """The loss object every `return` of `node` holds (a constructor, a helper's, or a name bound to
    one); None when a return holds anything else, or none returns a value."""
    if type(node) is not cst.FunctionDef:
        return None
    returned = sources.names.returns.get(node, [])
    found = {sources.constructor_name(value) or sources.returned_loss(value, depth) if type(value) is cst.Call
             else sources.held(value, depth) if type(value) in NAMES_AND_ATTRIBUTES else None
             for value in returned}
    return found.pop() if len(found) == 1 and None not in found else None


def _parameter_roles(definition) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """A function of another file: its positional parameters and those it uses as a loss target (node-free)."""
    node = definition.node
    if type(node) is not cst.FunctionDef:
        return None
    params = node.params
    positional = tuple(p.name.value for p in (*params.posonly_params, *params.params))
    every = (*positional, *(p.name.value for p in params.kwonly_params))
    losses = definition.model.losses
    return positional, frozenset(name for name in every if losses.parameter_role(node, name) == "target"
                                 and _target_keeps_grad(losses, node, name))


def _target_keeps_grad(losses: LossSources, node: cst.FunctionDef, parameter: str) -> bool:
    """Some loss of the function takes the parameter, or a name bound from it, as its target through
    operations that keep requires-grad (`labels[:, c]`, `ref.float()`; not `torch.argmax(ref, 1)`): the
    caller's tensor itself is then the target."""
    kept = {parameter}
    bindings = [b for b in losses.names.bindings_within(node) if b.value is not None]
    changed = True
    while changed:
        changed = False
        for binding in bindings:
            operand = torch_ops.grad_operand(binding.value, losses.qualify)  # type: ignore[arg-type]
            if binding.name not in kept and operand is not None and read_names(operand) & kept:
                kept.add(binding.name)
                changed = True
    for call in losses.calls_in(node):
        found = losses._plain_operands(call)
        operand = torch_ops.grad_operand(found.target, losses.qualify) if found is not None and found.target is not None else None
        if operand is not None and read_names(operand) & kept:
            return True
    return False


def receiving_parameter(call: cst.Call, argument: cst.BaseExpression, node: cst.FunctionDef, skip: int) -> str | None:
    """The parameter of `node` that the argument expression `argument` of `call` is bound to."""
    params = node.params
    positional = [*params.posonly_params, *params.params][skip:]
    index = 0
    for arg in call.args:
        if arg.star:
            return None  # `*args`/`**kwargs` make later positions unknowable
        if arg.value is argument:
            if arg.keyword is not None:
                names = {p.name.value for p in (*positional, *params.kwonly_params)}
                return arg.keyword.value if arg.keyword.value in names else None
            return positional[index].name.value if index < len(positional) else None
        if arg.keyword is None:
            index += 1
    return None


def read_names(expr: cst.CSTNode) -> set[str]:
    """Variable names an expression reads (not attribute names, not keyword names)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)  # exact types (libcst has no subclass of them): no ABC isinstance per node
        if kind is cst.Name:
            found.add(node.value)  # type: ignore[attr-defined]
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)  # type: ignore[attr-defined]  # `x.name` reads `x`; `f(key=x)` reads `x`, not `key`
        else:
            stack.extend(code_children(node))
    return found


def _one_returned_loss(losses, node, depth: int) -> str | None:
    """The loss object every `return` of `node` holds (a constructor or a name bound to one); None when
    a return holds anything else, or none returns a value."""
    if type(node) is not cst.FunctionDef:
        return None
    returned = losses.names.returns.get(node, [])
    found = {losses.constructor_name(value) or losses.returned_loss(value, depth) if type(value) is cst.Call
             else losses.held(value, depth) if type(value) in NAMES_AND_ATTRIBUTES else None
             for value in returned}
    return found.pop() if len(found) == 1 and None not in found else None
