"""Which calls are loss computations, and which of their arguments is the target/reference.

Recognised: torch functional losses (`F.mse_loss(input, target)`), `torch.nn.*Loss` instances
(local, module-level, or stored on `self` in the same class), and user loss classes/functions
whose name says so (`PatchSlicedWassersteinLoss`, `perceptual_loss`), which take (prediction,
reference) by convention.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.analysis.imports import ImportTracker, dotted_name

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


def is_loss_class_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.endswith("Loss") and last[:1].isupper()


def _is_loss_function_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.endswith("_loss") or last in {"cross_entropy", "kl_div", "binary_cross_entropy"}


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
            if _is_loss_function_name(func.value):
                return operands(call, func.value, display)
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            attr = func.attr.value
            loss_class = self.on_self.get(class_name or "", {}).get(attr)
            if loss_class is not None:
                return operands(call, loss_class, display)
            if _is_loss_function_name(attr) or is_loss_class_name(attr):
                return operands(call, attr, display)
        return None
