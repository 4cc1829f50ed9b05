"""Which calls are loss computations, and which of their arguments is the target/reference.

This is the one definition of a loss every rule uses (`LossInstances.resolve`). Recognised:

* torch functional losses through any import alias (`F.mse_loss`, `from torch.nn.functional import
  smooth_l1_loss as sl1`), also when stored and called later (`self.loss_fn = F.smooth_l1_loss`);
* `torch.nn.*Loss` and user `*Loss` instances: local, module-level, stored on `self` in the same class,
  called through `.forward`, or constructed and called inline (`nn.MSELoss()(pred, y)`);
* user losses by what the callee is called (`energy_loss`, `criterion`, `self.loss_fn` received as an
  argument) or reached through a module or object holding losses (`losses.swd(x, ref)`);
* functions of the same file that use an argument as the target of a loss they compute
  (`helper_loss`).

They take (prediction, reference) by convention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst

from stabfix.model.imports import ImportTracker, dotted_name

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
LOSS_WORDS = frozenset({"loss", "losses", "criterion", "criterions", "criteria", "crit", "lossfn", "objective"})
# Loss-word names that hold something else: `loss_weights`, `loss_scaler`, `loss_history`.
_NOT_A_LOSS_VALUE = frozenset(
    {
        "weight", "weights", "scale", "scales", "scaler", "scaling", "history", "meter", "meters", "tracker",
        "names", "name", "keys", "fmt", "format", "str", "curve", "curves", "window", "coef", "coeff", "factor",
        "type", "types", "cfg", "config", "kwargs", "args",
    }
)
# ... and callees with a loss word that compute something else: `get_loss_weights()`, `log_loss(...)`.
_NOT_A_LOSS_CALL = _NOT_A_LOSS_VALUE | frozenset(
    {
        "get", "log", "logger", "logging", "print", "plot", "save", "record", "update", "dict", "list", "write",
        "show", "reset", "init", "grad", "grads", "backward", "step", "item", "value", "values", "ema", "avg",
        "average", "smooth", "smoothed", "build", "make", "create", "register", "add", "append",
    }
)


@lru_cache(maxsize=4096)
def identifier_words(name: str) -> tuple[str, ...]:
    """`x_style_ref` -> (x, style, ref); `PatchSWDLoss` -> (patch, swd, loss)."""
    return tuple(match.group(0).lower() for match in _CAMEL.finditer(name))


def is_loss_like_name(name: str) -> bool:
    """A variable or container whose name says it holds a loss value: `loss`, `style_loss`, `loss_dict`."""
    words = identifier_words(name.rsplit(".", 1)[-1])
    return any(w in LOSS_WORDS for w in words) and not any(w in _NOT_A_LOSS_VALUE for w in words)


def is_loss_callee_name(name: str) -> bool:
    """A function or callable attribute whose name says it computes a loss: `energy_loss`, `criterion`."""
    last = name.rsplit(".", 1)[-1]
    words = identifier_words(last)
    return (
        not last[:1].isupper()  # `StyleLoss(...)` constructs the module
        and any(w in LOSS_WORDS for w in words)
        and not any(w in _NOT_A_LOSS_CALL for w in words)
    )


# Methods of a list or dict named for losses (`losses.append(loss)`): they store, not compute.
_CONTAINER_METHODS = frozenset({"extend", "insert", "setdefault", "pop", "items", "keys", "index", "count", "remove"})
# torch losses whose name does not end in `_loss`
_TORCH_LOSS_FUNCTIONS = frozenset(
    {"cross_entropy", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss"}
)

# Position of the target argument, for losses where it is not the second one.
_TARGET_INDEX = {
    "margin_ranking_loss": 2,
    "cosine_embedding_loss": 2,
    "MarginRankingLoss": 2,
    "CosineEmbeddingLoss": 2,
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


@dataclass(frozen=True)
class LossOperands:
    call: cst.Call
    loss_name: str  # for messages: `F.mse_loss`, `self.criterion`
    prediction: cst.BaseExpression | None
    target: cst.BaseExpression | None
    kind: str = ""  # qualified name of the loss function or class (`torch.nn.MSELoss`), as far as known


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
    return bool(words) and words <= LOSS_WORDS


def _argument(call: cst.Call, index: int | None, keywords: tuple[str, ...]) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            return arg.value
    if index is None:
        return None
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[index].value if index < len(positional) else None


def operands(call: cst.Call, kind_name: str, display: str) -> LossOperands | None:
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
    )


class LossInstances:
    """Names bound to losses: `crit = nn.MSELoss()`, `self.swd = SWDLoss()`, `self.loss_fn = F.smooth_l1_loss`.

    Filled during the traversal (see `record_assignment`); attribute names are tracked per class.
    """

    def __init__(self, imports: ImportTracker) -> None:
        self.imports = imports
        self.local: dict[str, str] = {}  # variable -> loss class or function qualified name
        self.on_self: dict[str, dict[str, str]] = {}  # class name -> attr -> loss class or function

    def constructor_name(self, value: cst.BaseExpression) -> str | None:
        """The loss class a value constructs, if it does."""
        if not isinstance(value, cst.Call):
            return None
        name = self.imports.qualify(value.func) or dotted_name(value.func)
        return name if name is not None and is_loss_class_name(name) else None

    def record_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression, class_name: str | None) -> None:
        loss = self.constructor_name(value)
        if loss is None:
            qualified = self.imports.qualify(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            loss = qualified if qualified is not None and is_torch_loss_function(qualified) else None
        if loss is None and isinstance(target, cst.Name):
            loss = self._held(value, class_name)  # `loss_fn = self.criterion`
        if loss is None:
            return
        if isinstance(target, cst.Name):
            self.local[target.value] = loss
        elif (
            class_name is not None
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            self.on_self.setdefault(class_name, {})[target.attr.value] = loss

    def _held(self, value: cst.BaseExpression, class_name: str | None) -> str | None:
        """The loss a name or `self` attribute was bound to."""
        if isinstance(value, cst.Name):
            return self.local.get(value.value)
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
            return self.on_self.get(class_name or "", {}).get(value.attr.value)
        return None

    def resolve(self, call: cst.Call, class_name: str | None) -> LossCall | None:
        """The loss `call` computes, by what its callee is; None when it is not a loss."""
        func = call.func
        display = dotted_name(func) or "loss"
        if isinstance(func, cst.Call):  # `nn.MSELoss()(pred, target)`
            loss_class = self.constructor_name(func)
            if loss_class is None:
                return None
            shown = dotted_name(func.func) or loss_class
            return LossCall(call, f"{shown}()", loss_class.startswith("torch."), loss_class)
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            held = self._held(func.value, class_name)  # `criterion.forward(pred, target)`
            if held is not None:
                return LossCall(call, display, held.startswith("torch."), held)
        held = self._held(func, class_name)
        if held is not None:
            return LossCall(call, display, held.startswith("torch."), held)
        qualified = self.imports.qualify(func)
        if qualified is not None:
            last = qualified.rsplit(".", 1)[-1]
            if is_loss_class_name(qualified):
                return None  # constructing the module, not computing the loss
            if qualified.startswith("torch."):
                return LossCall(call, display, True, qualified) if is_torch_loss_function(qualified) else None
            # `from . import losses; losses.swd(a, b)`: a function of a project module of losses
            if self._is_loss_callee(last, func):
                return LossCall(call, display, False, qualified)
            return None
        if isinstance(func, cst.Name) and self._is_loss_callee(func.value, None):
            return LossCall(call, display, False, func.value)
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, (cst.Name, cst.Attribute))
            and self._is_loss_callee(func.attr.value, func)
        ):
            return LossCall(call, display, False, func.attr.value)
        return None

    @staticmethod
    def _is_loss_callee(name: str, func: cst.BaseExpression | None) -> bool:
        if is_loss_callee_name(name) or name in _TORCH_LOSS_FUNCTIONS:
            return True
        # a method of a module or object holding losses (`losses.swd`), not a container method
        words = set(identifier_words(name))
        return (
            isinstance(func, cst.Attribute)
            and _holds_losses(func.value)
            and not name[:1].isupper()
            and not name.startswith("_")
            and not words & (_NOT_A_LOSS_CALL | _CONTAINER_METHODS)
        )

    def loss_call(self, call: cst.Call, class_name: str | None) -> LossOperands | None:
        """Operands of `call` if it computes a loss, else None."""
        loss = self.resolve(call, class_name)
        return operands(call, loss.kind, loss.display) if loss is not None else None


# --- user loss functions defined in the same file -------------------------------------------------
#
# A call such as `make_loss(model, x)` is taken for a loss by its name, with the (prediction, target)
# convention. When the function is defined in the same file its body says what the argument really
# is: `def make_loss(model, x): return (model(x) - target).pow(2).mean()` feeds `x` to the model,
# so `x` is the model's *input*, not a constant of the loss.


@dataclass(frozen=True)
class FunctionDefinition:
    node: cst.FunctionDef
    class_name: str | None  # the class it is a method of (defined directly in its body), else None


def _is_static(node: cst.FunctionDef) -> bool:
    return any(
        (dotted_name(decorator.decorator) or "").rsplit(".", 1)[-1] == "staticmethod" for decorator in node.decorators
    )


def resolve_definition(
    call: cst.Call, definitions: dict[str, list[FunctionDefinition]], class_name: str | None
) -> tuple[cst.FunctionDef, int] | None:
    """The function of this file a call runs (plain function, or `self.method`), with the number of
    leading parameters the call does not pass (`self`/`cls`). None when it is not unambiguous."""
    func = call.func
    if isinstance(func, cst.Name):
        found = [d for d in definitions.get(func.value, []) if d.class_name is None]
        return (found[0].node, 0) if len(found) == 1 else None
    if (
        class_name is not None
        and isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
    ):
        found = [d for d in definitions.get(func.attr.value, []) if d.class_name == class_name]
        if len(found) != 1:
            return None
        return found[0].node, 0 if _is_static(found[0].node) else 1
    return None


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


class _Names(cst.CSTVisitor):
    """Variable names an expression reads (not attribute names, not keyword names)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def read_names(expr: cst.CSTNode) -> set[str]:
    collector = _Names()
    expr.visit(collector)
    return collector.names


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def parameter_role(node: cst.FunctionDef, parameter: str, losses: LossInstances, class_name: str | None) -> str | None:
    """What a parameter of a user loss function is, by the function's own body.

    "target": it (or a value derived from it) is the target of a loss computed inside;
    "input": it only reaches the prediction side of the losses inside, or it is fed to a model the
    function receives as another parameter (`model(x)`); None: the body does not say.
    """
    from stabfix.model.bindings import collect_bindings  # local: flow has no dependency on losses

    derived = {parameter}
    bindings = collect_bindings(node)
    changed = True
    while changed:
        changed = False
        for name, bound in bindings.by_name.items():
            if name not in derived and any(read_names(b.value) & derived for b in bound):
                derived.add(name)
                changed = True
    collector = _Calls()
    node.body.visit(collector)
    in_target = in_prediction = False
    for call in collector.calls:
        inner = losses.loss_call(call, class_name)
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
    for call in collector.calls:
        if isinstance(call.func, cst.Name) and call.func.value in callables:
            if any(read_names(arg.value) & derived for arg in call.args):
                return "input"
    return None


def helper_loss(
    call: cst.Call, definitions: dict[str, list[FunctionDefinition]], losses: LossInstances, class_name: str | None
) -> LossOperands | None:
    """A call of a function of this file that computes a loss with one of its arguments as the target:
    `def fit_term(pred, ref): return F.l1_loss(pred, ref)` makes `fit_term(model(x), y)` a loss of `y`."""
    resolved = resolve_definition(call, definitions, class_name)
    if resolved is None:
        return None
    definition, skip = resolved
    for arg in call.args:
        parameter = receiving_parameter(call, arg.value, definition, skip)
        if parameter is not None and parameter_role(definition, parameter, losses, class_name) == "target":
            display = dotted_name(call.func) or definition.name.value
            prediction = next((a.value for a in call.args if a is not arg and a.keyword is None), None)
            return LossOperands(call, display, prediction, arg.value, definition.name.value)
    return None
