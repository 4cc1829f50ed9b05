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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.traversal import children
from stabfix.model.names import Binding, Names

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


def _arg(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position].value if position < len(positional) else None


def _method(call: cst.Call, names: Names) -> Optional[str]:
    """`x.gather(...)` -> "gather" when `x` is no import (`torch.gather`, `dist.gather` are functions)."""
    func = call.func
    if isinstance(func, cst.Attribute) and names.qualify(func) is None:
        return func.attr.value
    return None


def _single_value(expr: cst.BaseExpression, names: Names) -> Optional[cst.BaseExpression]:
    """The value a name holds when one binding with a visible value reaches it; `self.x` set once in the class."""
    if isinstance(expr, cst.Name):
        return names.single_value(expr)
    bindings = self_attribute_bindings(expr, names)
    if len(bindings) == 1:
        return bindings[0].bound_value
    return None


def self_attribute_bindings(expr: cst.BaseExpression, names: Names) -> list[Binding]:
    """`self.<attr> = ...` in the methods of the class a `self.<attr>` read sits in."""
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
        return []
    scope = names.scope_of(expr.value)
    owner = names.enclosing_class(scope) if scope is not None else None
    return names.attribute_bindings(owner, expr.attr.value) if owner is not None else []


def log_softmax_of(expr: cst.BaseExpression, names: Names, follow: bool = True) -> Optional[LogSoftmax]:
    """The log_softmax an expression holds (directly, or through a name when `follow`)."""
    if follow and isinstance(expr, (cst.Name, cst.Attribute)) and not isinstance(expr, cst.Call):
        value = _single_value(expr, names)
        return log_softmax_of(value, names, follow=False) if value is not None else None
    if not isinstance(expr, cst.Call):
        return None
    qualified = names.qualify(expr.func)
    if qualified in LOG_SOFTMAX_FUNCTIONS:
        operand = _arg(expr, 0, "input")
        dtype_position = 3 if qualified == "torch.nn.functional.log_softmax" else 2
        casts = _arg(expr, dtype_position, "dtype") is not None
        return LogSoftmax(expr, operand, _arg(expr, 1, "dim"), casts) if operand is not None else None
    if _method(expr, names) == "log_softmax" and isinstance(expr.func, cst.Attribute):
        return LogSoftmax(expr, expr.func.value, _arg(expr, 0, "dim"), _arg(expr, 1, "dtype") is not None)
    module = _log_softmax_module(expr.func, names)
    if module is not None and len(expr.args) == 1 and expr.args[0].keyword is None:
        return LogSoftmax(expr, expr.args[0].value, _arg(module, 0, "dim"), False)
    return None


def _log_softmax_module(func: cst.BaseExpression, names: Names) -> Optional[cst.Call]:
    """`nn.LogSoftmax(dim=-1)` itself, or the one a name / `self.<attr>` is bound to."""
    if not isinstance(func, cst.Call):
        func = _single_value(func, names)  # type: ignore[assignment]
    if isinstance(func, cst.Call) and names.qualify(func.func) in LOG_SOFTMAX_MODULES:
        return func
    return None


def gather_of(call: cst.Call, names: Names) -> Optional[Gather]:
    qualified = names.qualify(call.func)
    if qualified == "torch.gather":
        return Gather(call, _arg(call, 0, "input"), _arg(call, 1, "dim"), _arg(call, 2, "index"), "gather")
    if qualified == "torch.take_along_dim":
        return Gather(call, _arg(call, 0, "input"), _arg(call, 2, "dim"), _arg(call, 1, "indices"), "take_along_dim")
    method = _method(call, names)
    if method == "gather":
        return Gather(call, call.func.value, _arg(call, 0, "dim"), _arg(call, 1, "index"), "gather")  # type: ignore[attr-defined]
    if method == "take_along_dim":
        return Gather(call, call.func.value, _arg(call, 1, "dim"), _arg(call, 0, "indices"), "take_along_dim")  # type: ignore[attr-defined]
    return None


def int_of(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    """An integer literal (`-1`, `2`), else None."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
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
    return isinstance(first, cst.Name) and isinstance(second, cst.Name) and first.value == second.value


def maybe_same_dim(softmax_dim: Optional[cst.BaseExpression], gather: Gather) -> bool:
    """`log_softmax(x, -1)` picked with `.gather(2, labels.unsqueeze(2))`: a last-dim softmax and a positive
    gather dim whose index adds one axis right there (one pick per row). The same axis when x has rank 3
    (the usual `[B, L, V]`), which a static check cannot prove."""
    first, second = int_of(softmax_dim), int_of(gather.dim)
    if first is None or second is None or first == second or -1 not in (first, second) or max(first, second) <= 0:
        return False
    index = gather.index
    if isinstance(index, cst.Call) and isinstance(index.func, cst.Attribute) and index.func.attr.value == "unsqueeze":
        return int_of(_arg(index, 0, "dim")) in (first, second)
    if isinstance(index, cst.Subscript) and index.slice:
        last = index.slice[-1].slice
        return isinstance(last, cst.Index) and isinstance(last.value, cst.Name) and last.value.value == "None"
    return False


# --- constants ---------------------------------------------------------------------------------------
def constant_of(expr: Optional[cst.BaseExpression], names: Names, depth: int = 0) -> Optional[float]:
    """The number an expression always holds, following names, parameter defaults and `self.<attr>`."""
    if expr is None or depth > 6:
        return None
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = constant_of(expr.expression, names, depth + 1)
        return None if inner is None else (-inner if isinstance(expr.operator, cst.Minus) else inner)
    if isinstance(expr, cst.BinaryOperation):
        left = constant_of(expr.left, names, depth + 1)
        right = constant_of(expr.right, names, depth + 1) if left is not None else None
        return _fold(left, expr.operator, right) if right is not None else None
    if isinstance(expr, cst.Name):
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


def _fold(left: float, operator: cst.BaseBinaryOp, right: float) -> Optional[float]:
    try:
        if isinstance(operator, cst.Multiply):
            return left * right
        if isinstance(operator, cst.Divide):
            return left / right
        if isinstance(operator, cst.Power):
            return float(left**right)
        if isinstance(operator, cst.Add):
            return left + right
        if isinstance(operator, cst.Subtract):
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
def magnitude_of(expr: cst.BaseExpression, names: Names, depth: int = 0) -> Optional[Magnitude]:
    """`x.std()`, `torch.norm(x)`, `torch.sqrt(v)`, `x.pow(2).mean(-1).sqrt()`, `x.abs().max()`, `v ** 0.5`,
    or a name bound to one: the statistic and the tensor it measures."""
    if depth > 3:
        return None
    if isinstance(expr, cst.Attribute):  # `self.ret_std`: a running statistic, updated in some method
        for binding in self_attribute_bindings(expr, names):
            found = magnitude_of(binding.bound_value, names, depth + 1) if binding.bound_value is not None else None
            if found is not None:
                return Magnitude(expr, expr)
        return None
    if isinstance(expr, cst.Name):
        value = names.single_value(expr)
        found = magnitude_of(value, names, depth + 1) if value is not None else None
        return Magnitude(expr, found.measured) if found is not None else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power):
        if constant_of(expr.right, names) == 0.5:
            return Magnitude(expr, expr.left)
        return None
    if not isinstance(expr, cst.Call):
        return None
    qualified = names.qualify(expr.func)
    method = _method(expr, names)
    receiver = expr.func.value if isinstance(expr.func, cst.Attribute) else None
    measured = _arg(expr, 0, "input") if qualified in MAGNITUDE_FUNCTIONS else receiver if method in MAGNITUDE_METHODS else None
    if measured is not None:
        if qualified in ("torch.sqrt", "torch.rsqrt") or method in ("sqrt", "rsqrt"):
            inner = magnitude_of(measured, names, depth + 1)  # the root of a mean of squares measures x
            measured = inner.measured if inner is not None else measured
        return Magnitude(expr, measured)
    if method in REDUCTIONS and receiver is not None:
        measured = _magnitude_operand(receiver, names)
        return Magnitude(expr, measured) if measured is not None else None
    if qualified in {"torch.mean", "torch.sum", "torch.amax", "torch.max"}:
        inner = _arg(expr, 0, "input")
        measured = _magnitude_operand(inner, names) if inner is not None else None
        return Magnitude(expr, measured) if measured is not None else None
    return None


def _magnitude_operand(expr: cst.BaseExpression, names: Names) -> Optional[cst.BaseExpression]:
    """`x.abs()`, `x.pow(2)`, `x ** 2`, `x * x`, `torch.abs(x)`, `x.square()`: the tensor x."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power) and constant_of(expr.right, names) == 2.0:
            return expr.left
        if isinstance(expr.operator, cst.Multiply) and _same_code(expr.left, expr.right):
            return expr.left
        return None
    if not isinstance(expr, cst.Call):
        return None
    qualified = names.qualify(expr.func)
    if qualified in {"torch.abs", "torch.square"}:
        return _arg(expr, 0, "input")
    if qualified == "torch.pow" and constant_of(_arg(expr, 1, "exponent"), names) == 2.0:
        return _arg(expr, 0, "input")
    method = _method(expr, names)
    receiver = expr.func.value if isinstance(expr.func, cst.Attribute) else None
    if method in ("abs", "square") and receiver is not None:
        return receiver
    if method == "pow" and receiver is not None and constant_of(_arg(expr, 0, "exponent"), names) == 2.0:
        return receiver
    return None


def _same_code(first: cst.CSTNode, second: cst.CSTNode) -> bool:
    return first.deep_equals(second)


# --- epsilon-guarded divisors (SF304) -----------------------------------------------------------------
@dataclass(frozen=True)
class GuardedDivisor:
    """`s + eps` (or `sqrt(v + eps)`) used to divide by: the sum, the statistic and the epsilon."""

    guard: cst.BinaryOperation  # the `s + eps` / `v + eps` addition
    statistic: cst.BaseExpression  # `s` / `v`
    measured: cst.BaseExpression  # the tensor whose size the statistic is
    epsilon: cst.BaseExpression
    value: float  # what the epsilon holds
    squared: bool  # the statistic is a square (a variance, a mean of squares), not a std/RMS/norm
    under_sqrt: bool  # `sqrt(v + eps)` / `rsqrt(v + eps)`: the epsilon is added before the root


def guarded_divisor(expr: cst.BaseExpression, names: Names, root: str = "sqrt", depth: int = 0) -> Optional[GuardedDivisor]:
    """What a divisor (or, with root="rsqrt", a multiplier) is when it is a magnitude plus a constant:
    `x.std() + 1e-8`, `eps + norm`, `torch.sqrt(var + 1e-12)`, `(ms + eps).sqrt()`, `(v + eps) ** 0.5`,
    `torch.rsqrt(v + eps)`, or a name bound to one. The constant is any positive number; callers judge it."""
    if depth > 2:
        return None
    if isinstance(expr, cst.Name):
        value = names.single_value(expr)
        return guarded_divisor(value, names, root, depth + 1) if value is not None else None
    if root == "sqrt" and isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _guard(expr, names, under_sqrt=False)
    inner = _root_operand(expr, names, root)
    if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Add):
        return _guard(inner, names, under_sqrt=True)
    return None


def _root_operand(expr: cst.BaseExpression, names: Names, root: str) -> Optional[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and root == "sqrt":
        return expr.left if constant_of(expr.right, names) == 0.5 else None
    if not isinstance(expr, cst.Call):
        return None
    if names.qualify(expr.func) == f"torch.{root}":
        return _arg(expr, 0, "input")
    if _method(expr, names) == root and not expr.args:
        return expr.func.value  # type: ignore[attr-defined]
    return None


def _guard(add: cst.BinaryOperation, names: Names, under_sqrt: bool) -> Optional[GuardedDivisor]:
    for statistic, epsilon in ((add.left, add.right), (add.right, add.left)):
        value = constant_of(epsilon, names)
        if value is None or value <= 0 or constant_of(statistic, names) is not None:
            continue
        magnitude = magnitude_of(statistic, names)
        if magnitude is not None:
            squared = _is_squared(magnitude.expr, names)
            return GuardedDivisor(add, statistic, magnitude.measured, epsilon, value, squared, under_sqrt)
        if under_sqrt:  # `sqrt(v + eps)`: whatever v is, its root is the size being divided by
            return GuardedDivisor(add, statistic, statistic, epsilon, value, True, True)
    return None


def _is_squared(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """A variance or a mean/sum of squares (not yet rooted)."""
    if isinstance(expr, (cst.Name, cst.Attribute)) and depth < 3:
        value = _single_value(expr, names)
        return _is_squared(value, names, depth + 1) if value is not None else False
    if not isinstance(expr, cst.Call):
        return False
    qualified = names.qualify(expr.func) or ""
    method = _method(expr, names) or ""
    if qualified in ("torch.var", "torch.var_mean") or method == "var":
        return True
    receiver = expr.func.value if isinstance(expr.func, cst.Attribute) and method else _arg(expr, 0, "input")
    return (method in REDUCTIONS or qualified in {"torch.mean", "torch.sum"}) and receiver is not None and (
        _magnitude_operand(receiver, names) is not None and not _is_abs(receiver, names)
    )


def _is_abs(expr: cst.BaseExpression, names: Names) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    return names.qualify(expr.func) == "torch.abs" or _method(expr, names) == "abs"


def scale_like(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """A size rather than a tensor of values: a constant, a magnitude statistic, or arithmetic on those
    (`0.5 * (input_rms + target_rms)`, `target_std`, `1.0`). Dividing it by a magnitude is scale matching."""
    if depth > 4:
        return False
    if constant_of(expr, names) is not None or magnitude_of(expr, names) is not None:
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply, cst.Divide, cst.Subtract)):
        return scale_like(expr.left, names, depth + 1) and scale_like(expr.right, names, depth + 1)
    if isinstance(expr, cst.Name):
        value = names.single_value(expr)
        return value is not None and scale_like(value, names, depth + 1)
    return False


def roots(expr: cst.BaseExpression, names: Names, hops: int = 2) -> set[str]:
    """The variables (and `self.<attr>` chains) an expression reads, and those their values read, `hops`
    bindings back; imported names (`torch`, `F`) are not variables."""
    found: set[str] = set()
    frontier = [expr]
    for _ in range(hops + 1):
        following = []
        for node in frontier:
            for key, name in _variables_read(node, names):
                if key in found:
                    continue
                found.add(key)
                value = names.single_value(name) if isinstance(name, cst.Name) and name in names.uses else None
                if value is not None:
                    following.append(value)
        frontier = following
    return found


def _variables_read(node: cst.CSTNode, names: Names) -> list[tuple[str, cst.BaseExpression]]:
    if isinstance(node, (cst.Name, cst.Attribute)):
        dotted = _dotted(node)
        if dotted is not None:
            return [] if names.qualify(node) is not None else [(dotted, node)]
        return _variables_read(node.value, names) if isinstance(node, cst.Attribute) else []
    parts = [node.value] if isinstance(node, cst.Arg) else children(node)
    return [found for child in parts for found in _variables_read(child, names)]


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


# --- precision ------------------------------------------------------------------------------------
AUTOCAST = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
     "torch.amp.autocast_mode.autocast"}
)
HALF = frozenset({"torch.float16", "torch.half"})


def autocast_dtype(call: cst.BaseExpression, names: Names) -> Optional[str]:
    """"float16" or "bfloat16" for an autocast context (`torch.autocast("cuda")` defaults to float16,
    the CPU one to bfloat16); None when it is not one or the dtype is not known."""
    if not isinstance(call, cst.Call) or names.qualify(call.func) not in AUTOCAST:
        return None
    dtype = _arg(call, 1, "dtype")  # `autocast(device_type, dtype)`, legacy `cuda.amp.autocast(enabled, dtype)`
    if dtype is not None:
        qualified = names.qualify(dtype)
        return "float16" if qualified in HALF else "bfloat16" if qualified in ("torch.bfloat16",) else None
    device = _arg(call, 0, "device_type")
    if names.qualify(call.func) == "torch.cpu.amp.autocast" or (
        isinstance(device, cst.SimpleString) and device.evaluated_value == "cpu"
    ):
        return "bfloat16"
    return "float16"


def made_half(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """The tensor was cast to float16 on its way here (`.half()`, `.to(torch.float16)`, `dtype=torch.half`)."""
    if depth > 3:
        return False
    for node in _walk(expr):
        if isinstance(node, cst.Call) and _method(node, names) == "half":
            return True
        if isinstance(node, (cst.Attribute, cst.Name)) and names.qualify(node) in HALF:
            return True
        if isinstance(node, cst.Name) and node in names.uses:
            value = names.single_value(node)
            if value is not None and made_half(value, names, depth + 1):
                return True
    return False


FULL_PRECISION = frozenset({"torch.float32", "torch.float", "torch.float64", "torch.double"})
_HOST_READ_METHODS = frozenset({"item", "tolist"})
_HOST_READ_BUILTINS = frozenset({"float", "int"})
_VALUE_KEEPING = frozenset({"detach", "cpu", "clone", "squeeze"})  # not a reduction: one huge element would dominate it


def made_full_precision(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """The tensor was cast to float32 or wider on its way here (`.float()`, `.double()`, `.to(torch.float32)`), so
    a tiny constant added to what is measured from it survives: it is no float16 value whatever its input was."""
    if depth > 3:
        return False
    for node in _walk(expr):
        if isinstance(node, cst.Name) and node in names.uses:
            value = names.single_value(node)
            if value is not None and made_full_precision(value, names, depth + 1):
                return True
        if not isinstance(node, cst.Call):
            continue
        method = _method(node, names)
        if method in ("float", "double"):
            return True
        if method == "to" and any(names.qualify(arg.value) in FULL_PRECISION for arg in node.args):
            return True
    return False


def host_number_of(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """The tensor that `call` turns into a Python number (`float(q)`, `q.item()`, `float(q.detach().cpu())`,
    `q.tolist()`), stripped of the value-keeping steps on its way out; None when `call` is no such read."""
    func = call.func
    if isinstance(func, cst.Name) and func.value in _HOST_READ_BUILTINS and len(call.args) == 1 and names.qualify(func) is None:
        operand = call.args[0].value
    elif _method(call, names) in _HOST_READ_METHODS and not call.args:
        operand = func.value
    else:
        return None
    while isinstance(operand, cst.Call) and _method(operand, names) in _VALUE_KEEPING and not operand.args:
        operand = operand.func.value
    return operand


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


# ops that CUDA autocast runs in float32 whatever their input (the AMP docs' "autocast to float32" list)
AUTOCAST_FP32_OPS = frozenset(
    {"norm", "pow", "sum", "prod", "rsqrt", "softmax", "log_softmax", "exp", "log", "cumsum", "cumprod",
     "layer_norm", "group_norm", "normalize", "vector_norm", "matrix_norm", "reciprocal", "dist", "float", "double"}
)


def float32_under_autocast(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """The expression's last op (following ops that keep their input's dtype: mean, std, sqrt, abs...) is one
    that autocast computes in float32 (`x.pow(2).mean()`, `x.norm()`, `(x ** 2).sum()`), or a cast to it."""
    if depth > 6:
        return False
    if isinstance(expr, cst.Name):
        value = names.single_value(expr) if expr in names.uses else None
        return value is not None and float32_under_autocast(value, names, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power):
            return True
        return any(float32_under_autocast(side, names, depth + 1) for side in (expr.left, expr.right))
    if not isinstance(expr, cst.Call):
        return False
    qualified = names.qualify(expr.func) or ""
    method = _method(expr, names)
    op = method or qualified.rsplit(".", 1)[-1]
    if op in AUTOCAST_FP32_OPS:
        return True
    if op == "to":
        return any(names.qualify(arg.value) in ("torch.float32", "torch.float") for arg in expr.args)
    inner = expr.func.value if method else _arg(expr, 0, "input")  # type: ignore[attr-defined]
    return inner is not None and float32_under_autocast(inner, names, depth + 1)


def centred(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """`x - mean`, `(x - self.running_mean)`, or a name bound to one: a standardisation numerator, which
    shrinks with the spread it is divided by (in distribution)."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Subtract):
            return True
        if isinstance(expr.operator, (cst.Multiply, cst.Divide)):  # `w * (x - m)`, `(x - m) * gamma`
            return centred(expr.left, names, depth + 1) or centred(expr.right, names, depth + 1)
        return False
    if isinstance(expr, cst.Name) and depth < 3:
        value = names.single_value(expr) if expr in names.uses else None
        return value is not None and centred(value, names, depth + 1)
    return False


LOGARITHMS = frozenset({"log", "log10", "log2", "log1p"})


def is_logarithm(call: cst.Call, names: Names) -> bool:
    """`torch.log(...)`, `math.log10(...)`, `np.log(...)`, `x.log()`: a quotient inside is tamed by the log."""
    qualified = names.qualify(call.func)
    if qualified is not None:
        return qualified.rsplit(".", 1)[-1] in LOGARITHMS
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in LOGARITHMS


def bounds_above(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """The operand a call clamps from above: `q.clamp(max=1)`, `q.clamp(lo, hi)`, `q.clamp_max(1)`,
    `torch.clamp(q, max=1)`, `torch.minimum(q, c)`, `min(q, 1.0)`; None for anything else."""
    qualified = names.qualify(call.func) or ""
    method = _method(call, names) if isinstance(call.func, cst.Attribute) else None
    if method in ("clamp", "clip", "clamp_max") and not qualified:
        if method == "clamp_max" or _arg(call, 1, "max") is not None:
            return call.func.value  # type: ignore[attr-defined]
        return None
    if qualified in ("torch.clamp", "torch.clip"):
        return _arg(call, 0, "input") if _arg(call, 2, "max") is not None else None
    if qualified in ("torch.minimum", "torch.min") or (isinstance(call.func, cst.Name) and call.func.value == "min"
                                                        and qualified == ""):
        return _arg(call, 0, "input") if len(call.args) == 2 else None
    return None


def exceeds(test: cst.BaseExpression, statistic: cst.BaseExpression) -> bool:
    """An `if` test that holds only when the statistic is large: `norm > eps`, `eps < norm`, `... and norm > c`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return exceeds(test.left, statistic) or exceeds(test.right, statistic)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if isinstance(target.operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        return test.left.deep_equals(statistic)
    if isinstance(target.operator, (cst.LessThan, cst.LessThanEqual)):
        return target.comparator.deep_equals(statistic)
    return False
