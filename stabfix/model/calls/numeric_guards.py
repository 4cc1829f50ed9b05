"""Epsilon-guarded divisions and the precision they run in (SF304), helpers over the `names` part:

- `guarded_divisor(expr)`: a divisor `sqrt(v + eps)` / `v + eps` / `max(v, eps)` with its epsilon;
  `scale_like`, `roots`, `centred`, `exceeds`: what the guarded statistic is and what bounds it;
- precision: whether a value is made half (`made_half`, an fp16 `autocast_dtype`), made full precision
  (`made_full_precision`, `float32_under_autocast`), or read to the host as a number (`host_number_of`);
  `is_logarithm`, `bounds_above`.

Constants, magnitudes, log-softmax and gather calls are in `numerics.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls.numerics import REDUCTIONS, argument, constant_of, magnitude_of, magnitude_operand, method_of, single_value
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import children


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
    if type(expr) is cst.Name:
        value = names.single_value(expr)
        return guarded_divisor(value, names, root, depth + 1) if value is not None else None
    if root == "sqrt" and type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add:
        return _guard(expr, names, under_sqrt=False)
    inner = _root_operand(expr, names, root)
    if type(inner) is cst.BinaryOperation and type(inner.operator) is cst.Add:
        return _guard(inner, names, under_sqrt=True)
    return None


def _root_operand(expr: cst.BaseExpression, names: Names, root: str) -> Optional[cst.BaseExpression]:
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Power and root == "sqrt":
        return expr.left if constant_of(expr.right, names) == 0.5 else None
    if type(expr) is not cst.Call:
        return None
    if names.qualify(expr.func) == f"torch.{root}":
        return argument(expr, 0, "input")
    if method_of(expr, names) == root and not expr.args:
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
    if type(expr) in (cst.Name, cst.Attribute) and depth < 3:
        value = single_value(expr, names)
        return _is_squared(value, names, depth + 1) if value is not None else False
    if type(expr) is not cst.Call:
        return False
    qualified = names.qualify(expr.func) or ""
    method = method_of(expr, names) or ""
    if qualified in ("torch.var", "torch.var_mean") or method == "var":
        return True
    receiver = expr.func.value if type(expr.func) is cst.Attribute and method else argument(expr, 0, "input")
    return (method in REDUCTIONS or qualified in {"torch.mean", "torch.sum"}) and receiver is not None and (
        magnitude_operand(receiver, names) is not None and not _is_abs(receiver, names)
    )


def _is_abs(expr: cst.BaseExpression, names: Names) -> bool:
    if type(expr) is not cst.Call:
        return False
    return names.qualify(expr.func) == "torch.abs" or method_of(expr, names) == "abs"


def scale_like(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """A size rather than a tensor of values: a constant, a magnitude statistic, or arithmetic on those
    (`0.5 * (input_rms + target_rms)`, `target_std`, `1.0`). Dividing it by a magnitude is scale matching."""
    if depth > 4:
        return False
    if constant_of(expr, names) is not None or magnitude_of(expr, names) is not None:
        return True
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Multiply, cst.Divide, cst.Subtract):
        return scale_like(expr.left, names, depth + 1) and scale_like(expr.right, names, depth + 1)
    if type(expr) is cst.Name:
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
                value = names.single_value(name) if type(name) is cst.Name and name in names.uses else None
                if value is not None:
                    following.append(value)
        frontier = following
    return found


def _variables_read(node: cst.CSTNode, names: Names) -> list[tuple[str, cst.BaseExpression]]:
    if type(node) in (cst.Name, cst.Attribute):
        dotted = _dotted(node)
        if dotted is not None:
            return [] if names.qualify(node) is not None else [(dotted, node)]
        return _variables_read(node.value, names) if type(node) is cst.Attribute else []
    parts = [node.value] if type(node) is cst.Arg else children(node)
    return [found for child in parts for found in _variables_read(child, names)]


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
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
    if type(call) is not cst.Call or names.qualify(call.func) not in AUTOCAST:
        return None
    dtype = argument(call, 1, "dtype")  # `autocast(device_type, dtype)`, legacy `cuda.amp.autocast(enabled, dtype)`
    if dtype is not None:
        qualified = names.qualify(dtype)
        return "float16" if qualified in HALF else "bfloat16" if qualified in ("torch.bfloat16",) else None
    device = argument(call, 0, "device_type")
    if names.qualify(call.func) == "torch.cpu.amp.autocast" or (
        type(device) is cst.SimpleString and device.evaluated_value == "cpu"
    ):
        return "bfloat16"
    return "float16"


def made_half(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """The tensor was cast to float16 on its way here (`.half()`, `.to(torch.float16)`, `dtype=torch.half`)."""
    if depth > 3:
        return False
    for node in _walk(expr):
        if type(node) is cst.Call and method_of(node, names) == "half":
            return True
        if type(node) in (cst.Attribute, cst.Name) and names.qualify(node) in HALF:
            return True
        if type(node) is cst.Name and node in names.uses:
            value = names.single_value(node)
            if value is not None and made_half(value, names, depth + 1):
                return True
    return False


def half_cast_receiver(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """What a call casts to float16 when it is `X.half()`, `X.to(torch.float16)`, `X.to(device, torch.half)`,
    `X.to(dtype=torch.float16)` or `X.type(torch.float16)` (a dtype bound to a name first counts): `X`; else None.
    bfloat16 is not float16."""
    method = method_of(call, names)
    if method == "half" and not call.args:
        return call.func.value  # type: ignore[attr-defined]
    if method not in ("to", "type"):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value != "dtype":
            continue
        value = arg.value
        if type(value) is cst.Name and value in names.uses:
            value = names.single_value(value) or value
        if names.qualify(value) in HALF:
            return call.func.value  # type: ignore[attr-defined]
    return None


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
        if type(node) is cst.Name and node in names.uses:
            value = names.single_value(node)
            if value is not None and made_full_precision(value, names, depth + 1):
                return True
        if type(node) is not cst.Call:
            continue
        method = method_of(node, names)
        if method in ("float", "double"):
            return True
        if method == "to" and any(names.qualify(arg.value) in FULL_PRECISION for arg in node.args):
            return True
    return False


def host_number_of(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """The tensor that `call` turns into a Python number (`float(q)`, `q.item()`, `float(q.detach().cpu())`,
    `q.tolist()`), stripped of the value-keeping steps on its way out; None when `call` is no such read."""
    func = call.func
    if type(func) is cst.Name and func.value in _HOST_READ_BUILTINS and len(call.args) == 1 and names.qualify(func) is None:
        operand = call.args[0].value
    elif method_of(call, names) in _HOST_READ_METHODS and not call.args:
        operand = func.value
    else:
        return None
    while type(operand) is cst.Call and method_of(operand, names) in _VALUE_KEEPING and not operand.args:
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
    if type(expr) is cst.Name:
        value = names.single_value(expr) if expr in names.uses else None
        return value is not None and float32_under_autocast(value, names, depth + 1)
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) is cst.Power:
            return True
        return any(float32_under_autocast(side, names, depth + 1) for side in (expr.left, expr.right))
    if type(expr) is not cst.Call:
        return False
    qualified = names.qualify(expr.func) or ""
    method = method_of(expr, names)
    op = method or qualified.rsplit(".", 1)[-1]
    if op in AUTOCAST_FP32_OPS:
        return True
    if op == "to":
        return any(names.qualify(arg.value) in ("torch.float32", "torch.float") for arg in expr.args)
    inner = expr.func.value if method else argument(expr, 0, "input")  # type: ignore[attr-defined]
    return inner is not None and float32_under_autocast(inner, names, depth + 1)


def centred(expr: cst.BaseExpression, names: Names, depth: int = 0) -> bool:
    """`x - mean`, `(x - self.running_mean)`, or a name bound to one: a standardisation numerator, which
    shrinks with the spread it is divided by (in distribution)."""
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) is cst.Subtract:
            return True
        if type(expr.operator) in (cst.Multiply, cst.Divide):  # `w * (x - m)`, `(x - m) * gamma`
            return centred(expr.left, names, depth + 1) or centred(expr.right, names, depth + 1)
        return False
    if type(expr) is cst.Name and depth < 3:
        value = names.single_value(expr) if expr in names.uses else None
        return value is not None and centred(value, names, depth + 1)
    return False


LOGARITHMS = frozenset({"log", "log10", "log2", "log1p"})


def is_logarithm(call: cst.Call, names: Names) -> bool:
    """`torch.log(...)`, `math.log10(...)`, `np.log(...)`, `x.log()`: a quotient inside is tamed by the log."""
    qualified = names.qualify(call.func)
    if qualified is not None:
        return qualified.rsplit(".", 1)[-1] in LOGARITHMS
    return type(call.func) is cst.Attribute and call.func.attr.value in LOGARITHMS


def bounds_above(call: cst.Call, names: Names) -> Optional[cst.BaseExpression]:
    """The operand a call clamps from above: `q.clamp(max=1)`, `q.clamp(lo, hi)`, `q.clamp_max(1)`,
    `torch.clamp(q, max=1)`, `torch.minimum(q, c)`, `min(q, 1.0)`; None for anything else."""
    qualified = names.qualify(call.func) or ""
    method = method_of(call, names) if type(call.func) is cst.Attribute else None
    if method in ("clamp", "clip", "clamp_max") and not qualified:
        if method == "clamp_max" or argument(call, 1, "max") is not None:
            return call.func.value  # type: ignore[attr-defined]
        return None
    if qualified in ("torch.clamp", "torch.clip"):
        return argument(call, 0, "input") if argument(call, 2, "max") is not None else None
    if qualified in ("torch.minimum", "torch.min") or (type(call.func) is cst.Name and call.func.value == "min"
                                                        and qualified == ""):
        return argument(call, 0, "input") if len(call.args) == 2 else None
    return None


def exceeds(test: cst.BaseExpression, statistic: cst.BaseExpression) -> bool:
    """An `if` test that holds only when the statistic is large: `norm > eps`, `eps < norm`, `... and norm > c`."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return exceeds(test.left, statistic) or exceeds(test.right, statistic)
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if type(target.operator) in (cst.GreaterThan, cst.GreaterThanEqual):
        return test.left.deep_equals(statistic)
    if type(target.operator) in (cst.LessThan, cst.LessThanEqual):
        return target.comparator.deep_equals(statistic)
    return False
