"""SF306 mask-fill-overflows-half: a mask fill value float16 cannot hold, or -inf into a softmax.

A fill is `x.masked_fill(mask, v)` (`masked_fill_`, `torch.masked_fill`, `torch.where(mask, x, v)` either side,
`x.where(mask, v)`) with `v` a number the file shows (`numerics.signed_constant`). A finding is
- a finite `v` below -65504 (`-1e9`) in a file that computes in float16 (a float16 autocast region of `amp`, a
  float16 cast: `numeric_guards.half_cast_receiver`): `masked_fill` raises, `torch.where` fills -inf;
- `v` = -inf whose filled tensor reaches a softmax/log-softmax later in the function, with a mask that is
  not causal (nothing triangular in its origin) and no NaN test in the function: a fully masked row is NaN.
Fix (unsafe, see the rule page): the constant becomes `torch.finfo(x.dtype).min` for a plain-named `x`.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for, parsed_expression
from stabfix.model.calls.masks import keeps_a_position
from stabfix.model.calls.numeric_guards import half_cast_receiver
from stabfix.model.calls.numerics import argument, method_of, signed_constant
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.origins import instance_class
from stabfix.model.flow.gradient_use import contains
from stabfix.model.source.node_fields import children
from stabfix.shape_queries import Shape, arguments_may_fold_to, calls_named, spells_infinity

FLOAT16_LOWEST = -65504.0
SOFTMAXES = frozenset(f"{m}.{k}" for m in ("torch", "torch.nn.functional", "torch.special") for k in ("softmax", "log_softmax"))
NAN_GUARDS = frozenset({"nan_to_num", "nan_to_num_", "isnan"})


class MaskFillOverflowsHalf(Checker):
    code = "SF306"
    tokens = ("masked_fill", "where(")
    also_needs = (("inf", "e+", "00000", *(f"e{power}" for power in range(5, 39))),)  # a fill below -65504
    needs = ("amp",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # a fill call (any alias) by a number below -65504 or an infinity
        fills = calls_named(shape, ("masked_fill", "masked_fill_", "where"))
        return bool(fills) and (spells_infinity(shape) or arguments_may_fold_to(shape, fills, lambda v: v < FLOAT16_LOWEST))

    def __init__(self, context) -> None:
        super().__init__(context)
        self._fills: list[tuple[cst.Call, cst.BaseExpression, cst.BaseExpression, cst.BaseExpression, object]] = []
        self._half: cst.Call | None = None  # the first float16 cast of the file
        self._softmaxes: dict[object, list[cst.Call]] = {}  # per function
        self._guarded: set[object] = set()  # functions that test for NaN
        # (receiver, attribute, value) bound or registered as a buffer; kept where the receiver is the instance
        self._attribute_values: list[tuple[cst.BaseExpression, str, cst.BaseExpression]] = []
        self._buffers: dict[str, list[cst.BaseExpression]] = {}  # attribute of the instance -> values
        self._assigning: list[cst.Assign] = []  # the assignments the traversal is inside of
        self._bound: dict[int, str] = {}  # fill -> the name its statement binds (`s = s.masked_fill(...)`)

    def visit_Call(self, node: cst.Call) -> None:
        names = self.model.names
        function = self.model.enclosing.innermost_function()
        if self._half is None and half_cast_receiver(node, names) is not None:
            self._half = node
        qualified = names.qualify(node.func) or ""
        method = method_of(node, names) or ""
        if qualified in SOFTMAXES or method in ("softmax", "log_softmax"):
            self._softmaxes.setdefault(function, []).append(node)
        if method in NAN_GUARDS or qualified.rpartition(".")[2] in NAN_GUARDS:
            self._guarded.add(function)
        if method == "register_buffer" and type(argument(node, 0, "name")) is cst.SimpleString:
            key, value = str(argument(node, 0, "name").evaluated_value), argument(node, 1, "tensor")  # type: ignore[union-attr]
            if value is not None and type(node.func) is cst.Attribute:
                self._attribute_values.append((node.func.value, key, value))
        fill = _fill(node, qualified, method)
        if fill is not None:
            self._fills.append((node, *fill, function))
            outer = self._assigning[-1] if self._assigning else None
            if outer is not None and len(outer.targets) == 1 and dotted_name(outer.targets[0].target):
                self._bound[id(node)] = dotted_name(outer.targets[0].target)  # type: ignore[assignment]

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._assigning.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._assigning.append(node)
        for target in node.targets:
            if type(target.target) is cst.Attribute:
                self._attribute_values.append((target.target.value, target.target.attr.value, node.value))

    def leave_Module(self, original_node: cst.Module) -> None:
        (amp := self.model.amp).scaling()  # resolves the regions
        names = self.model.names
        for receiver, attribute, value in self._attribute_values:  # the instance's, whatever its receiver is called
            if type(receiver) is cst.Name and instance_class(names, self.model.tree.calls, receiver) is not None:
                self._buffers.setdefault(attribute, []).append(value)
        float16 = next((r.call for r in amp.regions if amp.enabled(r) and amp.dtype(r)[0] == "float16"), self._half)
        for call, filled, mask, value, function in self._fills:
            number = signed_constant(value, self.model.names)  # names are resolved once the traversal is done
            if number is None or number >= FLOAT16_LOWEST:
                continue
            if number != float("-inf"):
                if float16 is not None:
                    self.report(call, self._overflow_message(call, number, filled, float16), self._fix(value, filled))
                continue
            softmax = self._softmax_of(call, function)
            if softmax is None or function in self._guarded or self._zeroed_after(call, mask, function) or keeps_a_position(
                    mask, filled, self.model.names, lambda attribute: self._buffers.get(attribute, [])):
                continue
            self.report(call, self._infinity_message(call, filled, mask, softmax), self._fix(value, filled))

    def _softmax_of(self, fill: cst.Call, function) -> cst.Call | None:
        """The softmax the filled tensor reaches: one wrapped around the fill, or one of the name the fill
        is bound to (`s = s.masked_fill(...)`) or changes in place (`s.masked_fill_(...)`), later."""
        positions, bound = self.context.positions, self._bound_name(fill)
        line = positions.line(fill)
        for softmax in self._softmaxes.get(function, []):
            operand = _softmax_operand(softmax, self.model.names)
            if operand is not None and (contains(operand, fill) or (
                    bound is not None and positions.line(softmax) >= line and bound in _dotted_names(operand))):
                return softmax
        return None

    def _zeroed_after(self, fill: cst.Call, mask: cst.BaseExpression, function) -> bool:
        """A later fill of the same mask with 0 in the function (`probs.masked_fill(~keep, 0.0)`): NaN rows are zeroed."""
        line, text = self.context.positions.line(fill), code_for(mask)
        return any(self.context.positions.line(other) > line and code_for(other_mask) == text
                   and signed_constant(value, self.model.names) == 0
                   for other, _, other_mask, value, where in self._fills if where is function)

    def _bound_name(self, fill: cst.Call) -> str | None:
        in_place = method_of(fill, self.model.names) == "masked_fill_"
        return dotted_name(fill.func.value) if in_place else self._bound.get(id(fill))  # type: ignore[attr-defined]

    def _fix(self, value: cst.BaseExpression, filled: cst.BaseExpression) -> Fix | None:
        spelled, torch = dotted_name(filled), self._torch_name()
        if spelled is None or torch is None:
            return None
        lowest = f"{torch}.finfo({spelled}.dtype).min"
        return Fix("unsafe", f"fill with `{lowest}`, the lowest number the scores' dtype holds", {value: parsed_expression(lowest)})

    def _torch_name(self) -> str | None:
        bindings = self.model.names.module_scope.bindings
        aliases = sorted(name for name, found in bindings.items() if any(b.qualified == "torch" for b in found))
        return "torch" if "torch" in aliases else aliases[0] if aliases else None

    def _overflow_message(self, call: cst.Call, number: float, filled: cst.BaseExpression, float16: cst.Call) -> str:
        return (
            f"`{_short(call)}` fills with {number:g}, beyond float16's range (lowest -65504), and this file computes in "
            f"float16 (`{_short(float16)}`, line {self.context.positions.line(float16)}): on float16 scores `masked_fill` "
            "raises \"value cannot be converted to type Half without overflow\" and `torch.where` fills -inf (a fully "
            f"masked row then turns NaN); fill with `torch.finfo({_dtype_owner(filled)}.dtype).min`"
        )

    def _infinity_message(self, call: cst.Call, filled: cst.BaseExpression, mask: cst.BaseExpression, softmax: cst.Call) -> str:
        return (
            f"`{_short(call)}` fills with -inf before the softmax on line {self.context.positions.line(softmax)}, and the "
            f"mask `{_short(mask)}` is not causal: a row whose every position is masked (an all-padding sequence, a query "
            "that sees no key) gets softmax(-inf, ..., -inf) = NaN, which the backward pass spreads to every weight; fill "
            f"with `torch.finfo({_dtype_owner(filled)}.dtype).min` or zero such rows after the softmax"
        )


def _fill(call: cst.Call, qualified: str, method: str):
    """(filled tensor, mask, fill value) of a masked fill or a `where` with one constant side."""
    if method in ("masked_fill", "masked_fill_") and qualified != "torch.masked_fill":
        mask, value = argument(call, 0, "mask"), argument(call, 1, "value")
        return (call.func.value, mask, value) if mask is not None and value is not None else None  # type: ignore[attr-defined]
    if qualified == "torch.masked_fill":
        parts = (argument(call, 0, "input"), argument(call, 1, "mask"), argument(call, 2, "value"))
        return parts if None not in parts else None
    if qualified == "torch.where" and len(call.args) == 3:
        mask, first, second = (arg.value for arg in call.args)
        return (first, mask, second) if not _number_like(first) else (second, mask, first)
    if method == "where" and not qualified.startswith(("torch.", "numpy.")) and len(call.args) == 2:
        return call.func.value, call.args[0].value, call.args[1].value  # type: ignore[attr-defined]
    return None


def _number_like(expr: cst.BaseExpression) -> bool:
    """A literal, a signed one or a `float(...)` call: the constant side of a `where` (the other is the tensor)."""
    while type(expr) is cst.UnaryOperation:
        expr = expr.expression
    return type(expr) in (cst.Float, cst.Integer) or (type(expr) is cst.Call and dotted_name(expr.func) == "float")


def _softmax_operand(call: cst.Call, names) -> cst.BaseExpression | None:
    if type(call.func) is cst.Attribute and method_of(call, names) in ("softmax", "log_softmax") and not names.qualify(call.func):
        return call.func.value
    return argument(call, 0, "input")


def _dtype_owner(filled: cst.BaseExpression) -> str:
    return code_for(filled) if dotted_name(filled) else "scores"


def _dotted_names(expr: cst.CSTNode) -> set[str]:
    spelled = dotted_name(expr) if type(expr) in (cst.Name, cst.Attribute) else None
    return ({spelled} if spelled else set()).union(*(_dotted_names(child) for child in children(expr)))


def _short(node: cst.CSTNode) -> str:
    text = " ".join(code_for(node).split())
    return text if len(text) <= 60 else text[:57] + "..."
