"""Gradient arithmetic: which way an in-place update moves a tensor relative to its own gradient.

`direction(update, names)` reads a `ParamUpdate` event (`p.data.add_(p.grad * lr)`, `p -= lr * p.grad`,
`p.data = p.data + lr * p.grad`) and answers +1 when it moves `p` along `+p.grad` (what undoing a
descent step does), -1 along `-p.grad` (a descent step), None when the gradient is absent or its sign
cannot be told. Values are followed through the `names` model: a local alias (`g = p.grad`), a
constant (`scale = -0.5`), a gradient collected element by element (`grads = [p.grad for p in
params]` then `for p, g in zip(params, grads)` or `torch._foreach_add_(params, grads)`; `saved =
{n: p.grad.clone() for n, p in model.named_parameters()}` then `for n, g in saved.items():
params[n].add_(g)` with `params = dict(model.named_parameters())`); a step size that is a name,
attribute or call (`lr`, `self.lr`, `group["lr"]`) is taken as positive, as step sizes are.
"""

from __future__ import annotations

from typing import Mapping, Optional

import libcst as cst

from stabfix.model.calls.events import ParamUpdate, tensor_spelling
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import children, code_children

# What each update does with its addend: adds it, subtracts it, or replaces the tensor.
_IN_PLACE_SIGN = {"add_": 1, "sub_": -1, "copy_": 0, "out=add": 1, "out=sub": -1, "foreach_add_": 1, "foreach_sub_": -1}
Aliases = Mapping[str, int]  # loop variables that hold the updated tensor's gradient, with its sign
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
    aliases = aligned_gradients(update, names)
    if type(node) is cst.Call:
        args = [arg for arg in node.args if not arg.star]
        positional = [arg.value for arg in args if arg.keyword is None]
        alpha = next((arg.value for arg in args if arg.keyword and arg.keyword.value == "alpha"), None)
        if update.operation == "copy_":
            if not positional or not mentions_tensor(positional[0], p):
                return None
            return grad_sign(positional[0], p, names, aliases=aliases) or None
        if update.operation.startswith(("out=", "foreach_")):
            if len(positional) != 2:
                return None
            if update.operation.startswith("out=") and not _spells(_without_data(positional[0]), p):
                return None  # `torch.add(a, b, out=p)` replaces `p`
            term, scale = positional[1], alpha
            sign = grad_sign(term, p, names, aliases=aliases) if update.operation.startswith("out=") else None
            if update.operation.startswith("foreach_") and update.tensor is not None:
                sign = _listed_grad_sign(term, update.tensor, names)
        elif len(positional) == 2 and grad_sign(positional[0], p, names, aliases=aliases) == 0:
            term, scale = positional[1], positional[0]  # legacy `add_(lr, p.grad)`
            sign = grad_sign(term, p, names, aliases=aliases)
        elif positional:
            term, scale = positional[0], alpha
            sign = grad_sign(term, p, names, aliases=aliases)
        else:
            return None
        if not sign:
            return None
        if scale is not None:
            factor = constant_sign(scale, names)
            if factor is None:
                return None
            sign *= factor
        return sign * _IN_PLACE_SIGN[update.operation]
    if type(node) is cst.AugAssign:
        sign = grad_sign(node.value, p, names, aliases=aliases)
        if not sign:
            return None
        return sign if update.operation == "+=" else -sign
    if type(node) is cst.Assign:
        if not mentions_tensor(node.value, p):
            return None
        return grad_sign(node.value, p, names, aliases=aliases) or None
    return None


def _spells(node: cst.CSTNode, p: str) -> bool:
    """Whether `node` is the tensor spelled `p` (`p`, `model.head.weight`, `params[name]`)."""
    if type(node) is cst.Name:
        return node.value == p
    return type(node) in (cst.Attribute, cst.Subscript) and tensor_spelling(node) == p


def _without_data(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.value if type(node) is cst.Attribute and node.attr.value == "data" else node


def is_grad_of(node: cst.BaseExpression, p: str) -> bool:
    """`p.grad` or `p.grad.data`."""
    if type(node) is cst.Attribute:
        if node.attr.value == "grad" and _spells(node.value, p):
            return True
        if node.attr.value == "data":
            return is_grad_of(node.value, p)
    return False


def mentions_tensor(node: cst.CSTNode, p: str) -> bool:
    """Whether an expression reads `p` itself (not only `p.grad`): `p.data + lr * p.grad`."""
    if isinstance(node, cst.BaseExpression) and is_grad_of(node, p):
        return False
    if type(node) is cst.Name:
        return node.value == p
    if _spells(node, p):
        return True
    return any(mentions_tensor(child, p) for child in children(node))


def contains_grad(node: cst.CSTNode, p: str) -> bool:
    # `is_grad_of` holds of attributes only, and no attribute sits under trivia
    if type(node) is cst.Attribute and is_grad_of(node, p):
        return True
    return any(contains_grad(child, p) for child in code_children(node))


def grad_sign(
    node: cst.BaseExpression, p: str, names: Names, depth: int = 0, aliases: Optional[Aliases] = None
) -> Optional[int]:
    """Sign with which `p.grad` enters an expression: 1, -1, 0 (absent) or None (present, sign unknown).
    `aliases`: loop variables that hold `p.grad` element by element (see `aligned_gradients`)."""
    if depth > _MAX_DEPTH:
        return None
    if is_grad_of(node, p):
        return 1
    if type(node) is cst.Name:
        if aliases and node.value in aliases and all(b.kind == "for" for b in names.reaching(node)):
            return aliases[node.value]
        value = names.single_value(node)
        if value is None or value is node:
            return 0
        return grad_sign(value, p, names, depth + 1, aliases)
    if type(node) is cst.UnaryOperation:
        inner = grad_sign(node.expression, p, names, depth + 1, aliases)
        if type(node.operator) is cst.Minus and inner:
            return -inner
        return inner if type(node.operator) is cst.Plus or not inner else None
    if type(node) is cst.BinaryOperation:
        return _binary_grad_sign(node, p, names, depth, aliases)
    if type(node) is cst.Call:
        return _call_grad_sign(node, p, names, depth, aliases)
    if type(node) is cst.Subscript:
        return grad_sign(node.value, p, names, depth + 1, aliases)
    return None if contains_grad(node, p) else 0


def _binary_grad_sign(node: cst.BinaryOperation, p: str, names: Names, depth: int, aliases: Optional[Aliases]) -> Optional[int]:
    left = grad_sign(node.left, p, names, depth + 1, aliases)
    right = grad_sign(node.right, p, names, depth + 1, aliases)
    if left is None or right is None or (left and right):
        return None
    if not left and not right:
        return 0
    op = node.operator
    if type(op) in (cst.Multiply, cst.Divide):
        if right and type(op) is cst.Divide:
            return None
        factor = constant_sign(node.right if left else node.left, names, depth + 1)
        return (left or right) * factor if factor else None
    if type(op) is cst.Add:
        return left or right
    if type(op) is cst.Subtract:
        return left if left else -right
    return None


def _call_grad_sign(node: cst.Call, p: str, names: Names, depth: int, aliases: Optional[Aliases]) -> Optional[int]:
    func = node.func
    args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if type(func) is cst.Attribute:
        base = grad_sign(func.value, p, names, depth + 1, aliases)
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
            sign = grad_sign(args[0], p, names, depth + 1, aliases)
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
    if type(node) in (cst.Integer, cst.Float):
        return 1 if float(node.value.replace("_", "")) > 0 else None
    if type(node) is cst.UnaryOperation:
        inner = constant_sign(node.expression, names, depth + 1)
        if inner is None:
            return None
        return -inner if type(node.operator) is cst.Minus else inner
    if type(node) is cst.BinaryOperation:
        left = constant_sign(node.left, names, depth + 1)
        right = constant_sign(node.right, names, depth + 1)
        if left is None or right is None:
            return None
        if type(node.operator) in (cst.Multiply, cst.Divide, cst.FloorDivide):
            return left * right
        if type(node.operator) is cst.Add and left == right:
            return left
        if type(node.operator) is cst.Power and left == 1:
            return 1
        return None
    if type(node) is cst.Name:
        value = names.single_value(node)
        if type(value) in (cst.UnaryOperation, cst.Integer, cst.Float, cst.BinaryOperation):
            return constant_sign(value, names, depth + 1)
        return 1
    if type(node) in (cst.Attribute, cst.Subscript, cst.Call):
        return 1
    return None


# --- gradients collected element by element ---------------------------------------------------------
def aligned_gradients(update: ParamUpdate, names: Names) -> dict[str, int]:
    """Loop variables that hold the updated tensor's gradient (with its sign) element by element:
    `g` in `for p, g in zip(params, grads)` with `grads = [p.grad for p in params]`, and `g` in
    `for n, g in saved.items(): params[n].add_(g)` where `saved` maps parameter names of a model to
    their gradients and `params` to the parameters of the same model."""
    found: dict[str, int] = {}
    tensor = update.tensor
    for loop in update.site.loops:
        if type(loop.target) not in (cst.Tuple, cst.List) or type(loop.iter) is not cst.Call:
            continue
        elements = [element.value for element in loop.target.elements]
        positional = [arg.value for arg in loop.iter.args if arg.keyword is None and not arg.star]
        func = loop.iter.func
        if type(tensor) is cst.Name and dotted_name(func) == "zip" and len(positional) == len(elements):
            mine = next((i for i, e in enumerate(elements) if type(e) is cst.Name and e.value == tensor.value), None)
            for index, element in enumerate(elements):
                if mine is not None and index != mine and type(element) is cst.Name:
                    sign = _listed_grad_sign(positional[index], positional[mine], names)
                    if sign:
                        found[element.value] = sign
        elif (
            type(tensor) is cst.Subscript and type(func) is cst.Attribute and func.attr.value == "items"
            and not positional and len(elements) == 2 and all(type(e) is cst.Name for e in elements)
        ):
            key = tensor.slice[0].slice.value if type(tensor.slice[0].slice) is cst.Index else None
            if type(key) is cst.Name and key.value == elements[0].value:  # type: ignore[attr-defined]
                sign = _keyed_grad_sign(func.value, tensor.value, names)
                if sign:
                    found[elements[1].value] = sign  # type: ignore[attr-defined]
    return found


def _listed_grad_sign(addends: cst.BaseExpression, tensors: cst.BaseExpression, names: Names) -> Optional[int]:
    """Sign of `[t.grad ... for t in tensors]` (unfiltered, so element i belongs to tensor i), else None."""
    comp = _followed(addends, names)
    if type(comp) not in (cst.ListComp, cst.GeneratorExp):
        return None
    loop = comp.for_in
    if loop.inner_for_in is not None or loop.ifs or type(loop.target) is not cst.Name:
        return None
    if not _same_collection(loop.iter, tensors, names):
        return None
    return grad_sign(comp.elt, loop.target.value, names) or None


def _keyed_grad_sign(saved: cst.BaseExpression, params: cst.BaseExpression, names: Names) -> Optional[int]:
    """Sign of the gradients `saved` holds by parameter name when `params` holds the same model's
    parameters by name: `{n: p.grad.clone() for n, p in m.named_parameters()}` and
    `dict(m.named_parameters())` (or `{n: p for n, p in m.named_parameters()}`)."""
    grads, lookup = _by_name(_followed(saved, names)), _by_name(_followed(params, names))
    if grads is None or lookup is None or grads[0] != lookup[0]:
        return None
    (_, value, param), (_, looked_up, other) = grads, lookup
    if not (type(looked_up) is cst.Name and looked_up.value == other):
        return None
    return grad_sign(value, param, names) or None


def _by_name(value: Optional[cst.BaseExpression]) -> Optional[tuple[str, cst.BaseExpression, str]]:
    """(model, value, parameter variable) for `{n: value for n, p in model.named_parameters()}`, and
    (model, p, p) for `dict(model.named_parameters())`."""
    if type(value) is cst.Call and dotted_name(value.func) == "dict" and len(value.args) == 1:
        model = _named_parameters_of(value.args[0].value)
        return (model, cst.Name("p"), "p") if model is not None else None
    if type(value) is not cst.DictComp or value.for_in.inner_for_in is not None:
        return None
    target, model = value.for_in.target, _named_parameters_of(value.for_in.iter)
    if model is None or type(target) is not cst.Tuple or len(target.elements) != 2:
        return None
    key, param = (element.value for element in target.elements)
    if not (type(key) is cst.Name and type(param) is cst.Name and type(value.key) is cst.Name):
        return None
    return (model, value.value, param.value) if value.key.value == key.value else None


def _named_parameters_of(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "named_parameters":
        return dotted_name(node.func.value)
    return None


def _followed(node: cst.BaseExpression, names: Names) -> Optional[cst.BaseExpression]:
    """The value a name holds (one binding reaches it), or the expression itself."""
    return names.single_value(node) if type(node) is cst.Name else node


def _same_collection(a: cst.BaseExpression, b: cst.BaseExpression, names: Names) -> bool:
    """The same list: one name with the same bindings reaching both uses, or the same attribute chain."""
    if type(a) is cst.Name and type(b) is cst.Name:
        reaching = names.reaching(a)
        return a.value == b.value and bool(reaching) and {id(x) for x in reaching} == {id(x) for x in names.reaching(b)}
    spelled = dotted_name(a)
    return spelled is not None and "." in spelled and spelled == dotted_name(b)
