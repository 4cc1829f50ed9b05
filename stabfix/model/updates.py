"""Gradient arithmetic: which way an in-place update moves a tensor relative to its own gradient.

`direction(update, names)` reads a `ParamUpdate` event (`p.data.add_(p.grad * lr)`, `p -= lr * p.grad`,
`p.data = p.data + lr * p.grad`) and answers +1 when it moves `p` along `+p.grad` (what undoing a
descent step does), -1 along `-p.grad` (a descent step), None when the gradient is absent or its sign
cannot be told. Values are followed through the `names` model: a local alias (`g = p.grad`), a
constant (`scale = -0.5`); a step size that is a name, attribute or call (`lr`, `self.lr`,
`group["lr"]`) is taken as positive, as step sizes are.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.events import ParamUpdate
from stabfix.model.names import Names

# What each in-place method does with its argument: adds it, subtracts it, or replaces the tensor.
_IN_PLACE_SIGN = {"add_": 1, "sub_": -1, "copy_": 0}
# Methods that keep the sign of a gradient tensor, and the ones that scale it by their argument.
SIGN_KEEPING = {
    "data", "detach", "clone", "to", "float", "double", "half", "bfloat16", "type_as", "view", "view_as",
    "reshape", "contiguous", "sign", "clamp", "clip", "cpu", "cuda", "to_dense", "coalesce", "flatten",
    "squeeze", "unsqueeze", "expand_as", "nan_to_num",
}
_SCALING = {"mul", "multiply", "div", "divide", "true_divide"}
_MAX_DEPTH = 8


def direction(update: ParamUpdate, names: Names) -> Optional[int]:
    """+1 when the update moves its tensor along +grad, -1 along -grad, else None."""
    node, p = update.node, update.param
    if isinstance(node, cst.Call):
        args = [arg for arg in node.args if not arg.star]
        positional = [arg.value for arg in args if arg.keyword is None]
        alpha = next((arg.value for arg in args if arg.keyword and arg.keyword.value == "alpha"), None)
        if update.operation == "copy_":
            if not positional or not mentions_tensor(positional[0], p):
                return None
            return grad_sign(positional[0], p, names) or None
        if len(positional) == 2 and grad_sign(positional[0], p, names) == 0:
            term, scale = positional[1], positional[0]  # legacy `add_(lr, p.grad)`
        elif positional:
            term, scale = positional[0], alpha
        else:
            return None
        sign = grad_sign(term, p, names)
        if not sign:
            return None
        if scale is not None:
            factor = constant_sign(scale, names)
            if factor is None:
                return None
            sign *= factor
        return sign * _IN_PLACE_SIGN[update.operation]
    if isinstance(node, cst.AugAssign):
        sign = grad_sign(node.value, p, names)
        if not sign:
            return None
        return sign if update.operation == "+=" else -sign
    if isinstance(node, cst.Assign):
        if not mentions_tensor(node.value, p):
            return None
        return grad_sign(node.value, p, names) or None
    return None


def is_grad_of(node: cst.BaseExpression, p: str) -> bool:
    """`p.grad` or `p.grad.data`."""
    if isinstance(node, cst.Attribute):
        if node.attr.value == "grad" and isinstance(node.value, cst.Name) and node.value.value == p:
            return True
        if node.attr.value == "data":
            return is_grad_of(node.value, p)
    return False


def mentions_tensor(node: cst.CSTNode, p: str) -> bool:
    """Whether an expression reads `p` itself (not only `p.grad`): `p.data + lr * p.grad`."""
    if isinstance(node, cst.BaseExpression) and is_grad_of(node, p):
        return False
    if isinstance(node, cst.Name):
        return node.value == p
    return any(mentions_tensor(child, p) for child in node.children)


def contains_grad(node: cst.CSTNode, p: str) -> bool:
    if isinstance(node, cst.BaseExpression) and is_grad_of(node, p):
        return True
    return any(contains_grad(child, p) for child in node.children)


def grad_sign(node: cst.BaseExpression, p: str, names: Names, depth: int = 0) -> Optional[int]:
    """Sign with which `p.grad` enters an expression: 1, -1, 0 (absent) or None (present, sign unknown)."""
    if depth > _MAX_DEPTH:
        return None
    if is_grad_of(node, p):
        return 1
    if isinstance(node, cst.Name):
        value = names.single_value(node)
        if value is None or value is node:
            return 0
        return grad_sign(value, p, names, depth + 1)
    if isinstance(node, cst.UnaryOperation):
        inner = grad_sign(node.expression, p, names, depth + 1)
        if isinstance(node.operator, cst.Minus) and inner:
            return -inner
        return inner if isinstance(node.operator, cst.Plus) or not inner else None
    if isinstance(node, cst.BinaryOperation):
        return _binary_grad_sign(node, p, names, depth)
    if isinstance(node, cst.Call):
        return _call_grad_sign(node, p, names, depth)
    if isinstance(node, cst.Subscript):
        return grad_sign(node.value, p, names, depth + 1)
    return None if contains_grad(node, p) else 0


def _binary_grad_sign(node: cst.BinaryOperation, p: str, names: Names, depth: int) -> Optional[int]:
    left = grad_sign(node.left, p, names, depth + 1)
    right = grad_sign(node.right, p, names, depth + 1)
    if left is None or right is None or (left and right):
        return None
    if not left and not right:
        return 0
    op = node.operator
    if isinstance(op, (cst.Multiply, cst.Divide)):
        if right and isinstance(op, cst.Divide):
            return None
        factor = constant_sign(node.right if left else node.left, names, depth + 1)
        return (left or right) * factor if factor else None
    if isinstance(op, cst.Add):
        return left or right
    if isinstance(op, cst.Subtract):
        return left if left else -right
    return None


def _call_grad_sign(node: cst.Call, p: str, names: Names, depth: int) -> Optional[int]:
    func = node.func
    args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if isinstance(func, cst.Attribute):
        base = grad_sign(func.value, p, names, depth + 1)
        method = func.attr.value
        if base:
            if method in SIGN_KEEPING:
                return base
            if method in ("neg", "negative"):
                return -base
            if method in _SCALING and args:
                factor = constant_sign(args[0], names, depth + 1)
                return base * factor if factor else None
            if method in ("add", "sub") and not any(contains_grad(arg, p) for arg in args):
                return base
            return None
        if base is None:
            return None
        if method in ("add", "sub") and args:  # `p.data.add(p.grad, alpha=lr)` used as a value
            sign = grad_sign(args[0], p, names, depth + 1)
            if not sign:
                return sign
            alpha = next((arg.value for arg in node.args if arg.keyword and arg.keyword.value == "alpha"), None)
            factor = constant_sign(alpha, names, depth + 1) if alpha is not None else 1
            return sign * factor * (1 if method == "add" else -1) if factor else None
    return None if contains_grad(node, p) else 0


def constant_sign(node: cst.BaseExpression, names: Names, depth: int = 0) -> Optional[int]:
    """Sign of a step-size-like factor: literals by value, names/attributes assumed positive (`lr`)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, (cst.Integer, cst.Float)):
        return 1 if float(node.value.replace("_", "")) > 0 else None
    if isinstance(node, cst.UnaryOperation):
        inner = constant_sign(node.expression, names, depth + 1)
        if inner is None:
            return None
        return -inner if isinstance(node.operator, cst.Minus) else inner
    if isinstance(node, cst.BinaryOperation):
        left = constant_sign(node.left, names, depth + 1)
        right = constant_sign(node.right, names, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.operator, (cst.Multiply, cst.Divide, cst.FloorDivide)):
            return left * right
        if isinstance(node.operator, cst.Add) and left == right:
            return left
        if isinstance(node.operator, cst.Power) and left == 1:
            return 1
        return None
    if isinstance(node, cst.Name):
        value = names.single_value(node)
        if isinstance(value, (cst.UnaryOperation, cst.Integer, cst.Float, cst.BinaryOperation)):
            return constant_sign(value, names, depth + 1)
        return 1
    if isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        return 1
    return None
