"""Numerics: what a tensor-math call computes, and what a constant is worth (SF104, SF304).

Helpers over the `names` part (not a traversal part; they query names after the traversal):

- `log_softmax_of(expr)`: `F.log_softmax(x, -1)`, `torch.log_softmax`, `torch.special.log_softmax`,
  `x.log_softmax(dim=-1)`, `nn.LogSoftmax(dim=-1)(x)` and a module bound to one (`self.lsm(x)`),
  following names: its operand, its dim, and whether it casts (`dtype=`).
- `gather_of(call)`: `src.gather(dim, idx)`, `torch.gather(src, dim, idx)`, `torch.take_along_dim(src, idx, dim)`,
  `src.take_along_dim(idx, dim=...)`: the source tensor, the dim and the index.
- `constant_of(expr)`: the number an expression holds: literals and arithmetic on them, names bound to
  one (module constants, parameter defaults), `self.<attr>` set in any method from one.
- `magnitude_of(expr)`: whether an expression is a magnitude statistic of a tensor (`x.std()`,
  `torch.norm(x)`, `x.pow(2).mean().sqrt()`, `x.abs().max()`...), following names, and the tensor it measures.
- `dims_equal(a, b)`: two dim arguments that name the same axis for sure.

Epsilon-guarded divisors and the precision they run in (SF304) are in `numeric_guards.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst

from stabfix.model.source.names import Binding, Names

LOG_SOFTMAX_FUNCTIONS = frozenset(
    {"torch.log_softmax", "torch.nn.functional.log_softmax", "torch.special.log_softmax"}
)
LOG_SOFTMAX_MODULES = frozenset({"torch.nn.LogSoftmax", "torch.nn.modules.activation.LogSoftmax"})
GATHER_FUNCTIONS = frozenset({"torch.gather", "torch.take_along_dim"})
# reductions that measure how large a tensor is (the denominators of std/RMS/norm scaling)
MAGNITUDE_FUNCTIONS = frozenset(
    {"torch.std", "torch.var", "torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm",
     "torch.linalg.matrix_norm", "torch.sqrt", "torch.rsqrt", "torch.std_mean", "torch.var_mean"}
)
MAGNITUDE_METHODS = frozenset({"std", "var", "norm", "sqrt", "rsqrt"})
# a reduction of `x.abs()` / `x.pow(2)` / `x ** 2` / `x * x` measures x too
REDUCTIONS = frozenset({"mean", "sum", "max", "amax", "nanmean"})
# methods that keep a tensor's values and change only dtype, layout or view
VALUE_PRESERVING = frozenset({"float", "double", "half", "bfloat16", "contiguous", "detach", "clone"})


@dataclass(frozen=True)
class LogSoftmax:
    call: cst.Call
    operand: cst.BaseExpression  # the logits
    dim: Optional[cst.BaseExpression]  # None: the deprecated implicit dim
    casts: bool  # `dtype=` given: the result's dtype differs from the operand's
    # reached through an elementwise op that keeps the full tensor (`torch.clamp(lp, min=-100)`, `lp.float()`):
    # the picked entries are not the log_softmax's own, so it cannot be rewritten as logits minus logsumexp
    wrapped: bool = False


@dataclass(frozen=True)
class Gather:
    call: cst.Call
    source: cst.BaseExpression  # the tensor entries are picked from
    dim: Optional[cst.BaseExpression]
    index: Optional[cst.BaseExpression]
    function: str  # "gather" or "take_along_dim"


@dataclass(frozen=True)
class Magnitude:
    expr: cst.BaseExpression  # the statistic (`x.std()`, `torch.sqrt(v)`)
    measured: cst.BaseExpression  # the tensor it measures (`x`, `v`)


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position].value if position < len(positional) else None


def method_of(call: cst.Call, names: Names) -> Optional[str]:
    """`x.gather(...)` -> "gather" when `x` is no import (`torch.gather`, `dist.gather` are functions)."""
    func = call.func
    if type(func) is cst.Attribute and names.qualify(func) is None:
        return func.attr.value
    return None


def single_value(expr: cst.BaseExpression, names: Names) -> Optional[cst.BaseExpression]:
    """The value a name holds when one binding with a visible value reaches it; `self.x` set once in the class."""
    if type(expr) is cst.Name:
        return names.single_value(expr)
    bindings = self_attribute_bindings(expr, names)
    if len(bindings) == 1:
        return bindings[0].bound_value
    return None


def self_attribute_bindings(expr: cst.BaseExpression, names: Names) -> list[Binding]:
    """`self.<attr> = ...` in the methods of the class a `self.<attr>` read sits in (the method's receiver,
    whatever its name: `Names.self_attribute_bindings`)."""
    return names.self_attribute_bindings(expr) if type(expr) is cst.Attribute else []


def log_softmax_of(expr: cst.BaseExpression, names: Names, follow: bool = True, depth: int = 0) -> Optional[LogSoftmax]:
    """The log_softmax an expression holds (directly, or through a name when `follow`), also through
    elementwise ops that keep every entry (`torch.clamp(lp, min=-100.0)`, `lp.float()`: `wrapped`)."""
    if depth > 4:
        return None
    if follow and type(expr) in (cst.Name, cst.Attribute) and type(expr) is not cst.Call:
        value = single_value(expr, names)
        return log_softmax_of(value, names, follow=False, depth=depth + 1) if value is not None else None
    if type(expr) is not cst.Call:
        return None
    inner = _kept_entries_operand(expr, names)
    if inner is not None:
        found = log_softmax_of(inner, names, follow=True, depth=depth + 1)
        return replace(found, wrapped=True) if found is not None else None
    qualified = names.qualify(expr.func)
    if qualified in LOG_SOFTMAX_FUNCTIONS:
        operand = argument(expr, 0, "input")
        dtype_position = 3 if qualified == "torch.nn.functional.log_softmax" else 2
        casts = argument(expr, dtype_position, "dtype") is not None
        return LogSoftmax(expr, operand, argument(expr, 1, "dim"), casts) if operand is not None else None
    if method_of(expr, names) == "log_softmax" and type(expr.func) is cst.Attribute:
        return LogSoftmax(expr, expr.func.value, argument(expr, 0, "dim"), argument(expr, 1, "dtype") is not None)
    module = _log_softmax_module(expr.func, names)
    if module is not None and len(expr.args) == 1 and expr.args[0].keyword is None:
        return LogSoftmax(expr, expr.args[0].value, argument(module, 0, "dim"), False)
    return None


# elementwise ops that keep a tensor's shape and every entry (bounds, casts, layout)
_ENTRYWISE = frozenset({"clamp", "clamp_min", "clamp_max", "clip", "nan_to_num"}) | (VALUE_PRESERVING - {"detach", "clone"})


def _kept_entries_operand(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """`torch.clamp(x, min=...)` / `x.clamp(...)` / `x.float()`: x, the tensor whose every entry the result keeps."""
    qualified = names.qualify(call.func) or ""
    if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _ENTRYWISE and qualified.count(".") == 1:
        return argument(call, 0, "input")
    method = method_of(call, names)
    if method in _ENTRYWISE and type(call.func) is cst.Attribute:
        return call.func.value
    return None


def _log_softmax_module(func: cst.BaseExpression, names: Names) -> Optional[cst.Call]:
    """`nn.LogSoftmax(dim=-1)` itself, or the one a name / `self.<attr>` is bound to."""
    if type(func) is not cst.Call:
        func = single_value(func, names)  # type: ignore[assignment]
    if type(func) is cst.Call and names.qualify(func.func) in LOG_SOFTMAX_MODULES:
        return func
    return None


def gather_of(call: cst.Call, names: Names) -> Optional[Gather]:
    qualified = names.qualify(call.func)
    if qualified == "torch.gather":
        return Gather(call, argument(call, 0, "input"), argument(call, 1, "dim"), argument(call, 2, "index"), "gather")
    if qualified == "torch.take_along_dim":
        return Gather(call, argument(call, 0, "input"), argument(call, 2, "dim"), argument(call, 1, "indices"), "take_along_dim")
    method = method_of(call, names)
    if method == "gather":
        return Gather(call, call.func.value, argument(call, 0, "dim"), argument(call, 1, "index"), "gather")  # type: ignore[attr-defined]
    if method == "take_along_dim":
        return Gather(call, call.func.value, argument(call, 1, "dim"), argument(call, 0, "indices"), "take_along_dim")  # type: ignore[attr-defined]
    return None


def int_of(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    """An integer literal (`-1`, `2`), else None."""
    if type(expr) is cst.Integer:
        return int(expr.value, 0)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = int_of(expr.expression)
        return -inner if inner is not None else None
    return None


def dims_equal(first: Optional[cst.BaseExpression], second: Optional[cst.BaseExpression]) -> bool:
    """Two dim arguments that certainly name the same axis: equal literals, or the same name."""
    if first is None or second is None:
        return False
    a, b = int_of(first), int_of(second)
    if a is not None or b is not None:
        return a == b
    return type(first) is cst.Name and type(second) is cst.Name and first.value == second.value


def maybe_same_dim(softmax_dim: Optional[cst.BaseExpression], gather: Gather) -> bool:
    """`log_softmax(x, -1)` picked with `.gather(2, labels.unsqueeze(2))`: a last-dim softmax and a positive
    gather dim whose index adds one axis right there (one pick per row). The same axis when x has rank 3
    (the usual `[B, L, V]`), which a static check cannot prove."""
    first, second = int_of(softmax_dim), int_of(gather.dim)
    if first is None or second is None or first == second or -1 not in (first, second) or max(first, second) <= 0:
        return False
    index = gather.index
    if type(index) is cst.Call and type(index.func) is cst.Attribute and index.func.attr.value == "unsqueeze":
        return int_of(argument(index, 0, "dim")) in (first, second)
    if type(index) is cst.Subscript and index.slice:
        last = index.slice[-1].slice
        return type(last) is cst.Index and type(last.value) is cst.Name and last.value.value == "None"
    return False


# --- constants ---------------------------------------------------------------------------------------
def constant_of(expr: Optional[cst.BaseExpression], names: Names, depth: int = 0) -> Optional[float]:
    """The number an expression always holds, following names, parameter defaults and `self.<attr>`."""
    if expr is None or depth > 6:
        return None
    if type(expr) in (cst.Integer, cst.Float):
        return float(expr.evaluated_value)
    if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        inner = constant_of(expr.expression, names, depth + 1)
        return None if inner is None else (-inner if type(expr.operator) is cst.Minus else inner)
    if type(expr) is cst.BinaryOperation:
        left = constant_of(expr.left, names, depth + 1)
        right = constant_of(expr.right, names, depth + 1) if left is not None else None
        return _fold(left, expr.operator, right) if right is not None else None
    if type(expr) is cst.Name:
        bindings = names.reaching(expr) if expr in names.uses else []
    else:
        bindings = self_attribute_bindings(expr, names)
    values = []
    for binding in bindings:
        if binding.kind == "param":
            value = binding.value  # the default
        elif binding.kind in ("assign", "unpack", "walrus"):
            value = binding.bound_value
        else:
            return None
        number = constant_of(value, names, depth + 1)
        if number is None:
            return None
        values.append(number)
    return values[0] if values and all(v == values[0] for v in values) else None


INFINITY_NAMES = frozenset({"math.inf", "torch.inf", "numpy.inf", "numpy.Inf", "numpy.NINF"})


def signed_constant(expr: Optional[cst.BaseExpression], names: Names) -> Optional[float]:
    """`constant_of`, and also the infinities a fill value is spelled with: `float("-inf")`, `-float("inf")`,
    `-math.inf`, `-torch.inf`, `-np.inf` (through one name: `NEG_INF = float("-inf")`)."""
    number = constant_of(expr, names)
    if number is not None or expr is None:
        return number
    if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        inner = signed_constant(expr.expression, names)
        return None if inner is None else (-inner if type(expr.operator) is cst.Minus else inner)
    if type(expr) is cst.Name and expr in names.uses and names.qualify(expr) is None:
        value = names.single_value(expr)
        return signed_constant(value, names) if value is not None and value is not expr else None
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "float" and names.qualify(expr.func) is None:
        if len(expr.args) == 1 and type(expr.args[0].value) is cst.SimpleString:
            text = str(expr.args[0].value.evaluated_value).strip().lower()
            if text.lstrip("+-") in ("inf", "infinity"):
                return float("-inf") if text.startswith("-") else float("inf")
        return None
    qualified = names.qualify(expr) or ""
    return float("-inf") if qualified == "numpy.NINF" else float("inf") if qualified in INFINITY_NAMES else None


def _fold(left: float, operator: cst.BaseBinaryOp, right: float) -> Optional[float]:
    try:
        if type(operator) is cst.Multiply:
            return left * right
        if type(operator) is cst.Divide:
            return left / right
        if type(operator) is cst.Power:
            return float(left**right)
        if type(operator) is cst.Add:
            return left + right
        if type(operator) is cst.Subtract:
            return left - right
    except (ZeroDivisionError, OverflowError, TypeError):
        return None
    return None


# fp16's smallest positive (subnormal) number, 2**-24 ~ 6e-8: a smaller epsilon rounds to 0 or to it in fp16
FP16_SMALLEST_SUBNORMAL = math.ldexp(1.0, -24)


def is_tiny_epsilon(value: Optional[float]) -> bool:
    """A positive constant too small for fp16 to hold: `x + eps` is `x` in fp16, so it guards nothing."""
    return value is not None and 0 < value < FP16_SMALLEST_SUBNORMAL


# --- magnitude statistics ---------------------------------------------------------------------------
DIVISION_FUNCTIONS = frozenset({"torch.div", "torch.divide", "torch.true_divide"})
DIVISION_METHODS = frozenset({"div", "divide", "true_divide", "div_", "divide_", "true_divide_"})


def division_operands(call: cst.Call, names: Names) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The numerator and divisor of a division spelled as a call: `torch.div(a, b)` (also `divide`,
    `true_divide`, any rounding mode) or the tensor method `a.div(b)` / `a.div_(b)`."""
    qualified = names.qualify(call.func)
    if qualified in DIVISION_FUNCTIONS:
        numerator, divisor = argument(call, 0, "input"), argument(call, 1, "other")
        return (numerator, divisor) if numerator is not None and divisor is not None else None
    if qualified is None and type(call.func) is cst.Attribute and call.func.attr.value in DIVISION_METHODS:
        divisor = argument(call, 0, "other")
        return (call.func.value, divisor) if divisor is not None else None
    return None


def magnitude_of(expr: cst.BaseExpression, names: Names, depth: int = 0) -> Optional[Magnitude]:
    """`x.std()`, `torch.norm(x)`, `torch.sqrt(v)`, `x.pow(2).mean(-1).sqrt()`, `x.abs().max()`, `v ** 0.5`,
    or a name bound to one: the statistic and the tensor it measures."""
    if depth > 3:
        return None
    if type(expr) is cst.Attribute:  # `self.ret_std`: a running statistic, updated in some method
        for binding in self_attribute_bindings(expr, names):
            found = magnitude_of(binding.bound_value, names, depth + 1) if binding.bound_value is not None else None
            if found is not None:
                return Magnitude(expr, expr)
        return None
    if type(expr) is cst.Name:
        value = names.single_value(expr)
        found = magnitude_of(value, names, depth + 1) if value is not None else None
        return Magnitude(expr, found.measured) if found is not None else None
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Power:
        if constant_of(expr.right, names) == 0.5:
            return Magnitude(expr, expr.left)
        return None
    if type(expr) is not cst.Call:
        return None
    qualified = names.qualify(expr.func)
    method = method_of(expr, names)
    receiver = expr.func.value if type(expr.func) is cst.Attribute else None
    root = _square_root_operand(expr, qualified, method, receiver, names)
    if root is not None:  # `torch.pow(v, 0.5)`, `v.pow(0.5)`: the root of a mean of squares measures x
        inner = magnitude_of(root, names, depth + 1)
        return Magnitude(expr, inner.measured if inner is not None else root)
    measured = argument(expr, 0, "input") if qualified in MAGNITUDE_FUNCTIONS else receiver if method in MAGNITUDE_METHODS else None
    if measured is not None:
        if qualified in ("torch.sqrt", "torch.rsqrt") or method in ("sqrt", "rsqrt"):
            inner = magnitude_of(measured, names, depth + 1)  # the root of a mean of squares measures x
            measured = inner.measured if inner is not None else measured
        return Magnitude(expr, measured)
    if method in REDUCTIONS and receiver is not None:
        measured = magnitude_operand(receiver, names)
        return Magnitude(expr, measured) if measured is not None else None
    if qualified in {"torch.mean", "torch.sum", "torch.amax", "torch.max"}:
        inner = argument(expr, 0, "input")
        measured = magnitude_operand(inner, names) if inner is not None else None
        return Magnitude(expr, measured) if measured is not None else None
    return None


def _square_root_operand(call: cst.Call, qualified: Optional[str], method: Optional[str],
                         receiver: Optional[cst.BaseExpression], names: Names) -> Optional[cst.BaseExpression]:
    """`torch.pow(v, 0.5)` / `v.pow(0.5)`: v (what `v ** 0.5` is the root of)."""
    if qualified == "torch.pow" and constant_of(argument(call, 1, "exponent"), names) == 0.5:
        return argument(call, 0, "input")
    if method == "pow" and receiver is not None and constant_of(argument(call, 0, "exponent"), names) == 0.5:
        return receiver
    return None


def magnitude_operand(expr: cst.BaseExpression, names: Names) -> Optional[cst.BaseExpression]:
    """`x.abs()`, `x.pow(2)`, `x ** 2`, `x * x`, `torch.abs(x)`, `x.square()`: the tensor x."""
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) is cst.Power and constant_of(expr.right, names) == 2.0:
            return expr.left
        if type(expr.operator) is cst.Multiply and _same_code(expr.left, expr.right):
            return expr.left
        return None
    if type(expr) is not cst.Call:
        return None
    qualified = names.qualify(expr.func)
    if qualified in {"torch.abs", "torch.square"}:
        return argument(expr, 0, "input")
    if qualified == "torch.pow" and constant_of(argument(expr, 1, "exponent"), names) == 2.0:
        return argument(expr, 0, "input")
    method = method_of(expr, names)
    receiver = expr.func.value if type(expr.func) is cst.Attribute else None
    if method in ("abs", "square") and receiver is not None:
        return receiver
    if method == "pow" and receiver is not None and constant_of(argument(expr, 0, "exponent"), names) == 2.0:
        return receiver
    return None


def _same_code(first: cst.CSTNode, second: cst.CSTNode) -> bool:
    return first.deep_equals(second)
