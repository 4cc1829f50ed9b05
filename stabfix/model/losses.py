"""Which calls are loss computations, and which of their arguments is the target/reference.

Recognised: torch functional losses (`F.mse_loss(input, target)`), `torch.nn.*Loss` instances
(local, module-level, or stored on `self` in the same class), and user loss classes/functions
whose name says so (`PatchSlicedWassersteinLoss`, `perceptual_loss`), which take (prediction,
reference) by convention.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.model.imports import ImportTracker, dotted_name

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
_FUNCTIONAL_PREFIXES = ("torch.nn.functional.", "torch.")


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


def _is_loss_function_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.endswith("_loss") or last in {
        "cross_entropy", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    }


# The names training code gives a loss callable it receives or stores: `criterion(pred, y)`, `self.loss_fn(...)`.
_LOSS_CALLABLE_NAMES = frozenset({"criterion", "loss_fn", "loss_func", "loss_function", "lossfn", "loss_fct"})


def _is_loss_callable_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1].lower().lstrip("_")
    return last in _LOSS_CALLABLE_NAMES or last.endswith("_criterion")


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
    """Names bound to loss-module instances: `crit = nn.MSELoss()`, `self.swd = SWDLoss()`.

    Filled during the traversal (see `record_assignment`); attribute names are tracked per class.
    """

    def __init__(self, imports: ImportTracker) -> None:
        self.imports = imports
        self.local: dict[str, str] = {}  # variable -> loss class qualified name
        self.on_self: dict[str, dict[str, str]] = {}  # class name -> attr -> loss class

    def constructor_name(self, value: cst.BaseExpression) -> str | None:
        """The loss class a value constructs, if it does."""
        if not isinstance(value, cst.Call):
            return None
        name = self.imports.qualify(value.func) or dotted_name(value.func)
        return name if name is not None and is_loss_class_name(name) else None

    def record_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression, class_name: str | None) -> None:
        loss_class = self.constructor_name(value)
        if loss_class is None and isinstance(target, cst.Name):
            loss_class = self._stored_loss(value, class_name)  # `loss_fn = self.criterion`
        if loss_class is None:
            return
        if isinstance(target, cst.Name):
            self.local[target.value] = loss_class
        elif (
            class_name is not None
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            self.on_self.setdefault(class_name, {})[target.attr.value] = loss_class

    def _stored_loss(self, value: cst.BaseExpression, class_name: str | None) -> str | None:
        if isinstance(value, cst.Name):
            return self.local.get(value.value)
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
            return self.on_self.get(class_name or "", {}).get(value.attr.value)
        return None

    def loss_call(self, call: cst.Call, class_name: str | None) -> LossOperands | None:
        """Operands of `call` if it computes a loss, else None."""
        func = call.func
        display = dotted_name(func) or "loss"
        qualified = self.imports.qualify(func)
        if qualified is not None:
            if any(qualified.startswith(prefix) for prefix in _FUNCTIONAL_PREFIXES) and _is_loss_function_name(qualified):
                return operands(call, qualified, display)
            if is_loss_class_name(qualified):
                return None  # constructing the module, not computing the loss
            if _is_loss_function_name(qualified):
                return operands(call, qualified, display)
            return None
        if isinstance(func, cst.Name):
            if func.value in self.local:
                return operands(call, self.local[func.value], display)
            if _is_loss_function_name(func.value) or _is_loss_callable_name(func.value):
                return operands(call, func.value, display)
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            attr = func.attr.value
            loss_class = self.on_self.get(class_name or "", {}).get(attr)
            if loss_class is not None:
                return operands(call, loss_class, display)
            if _is_loss_function_name(attr) or is_loss_class_name(attr) or _is_loss_callable_name(attr):
                return operands(call, attr, display)
        return None


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
