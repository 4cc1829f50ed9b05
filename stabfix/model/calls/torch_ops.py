"""Torch operations that keep a value, and what each does to the value's facts: one table.

Every part that follows a tensor through an expression (`values`, `history`, `cuts`, the identity of
tensors, `gradients`) asks this table instead of keeping a list of its own. An entry says, for the
result of the operation on a tensor:

- `grad`: it requires grad when the operand does (`.cuda()`, `.float()`, `.view(...)`, `[i]`,
  `.clone()`); not for an integer or boolean result (`.long()`, `.argmax()`, `x > 0`) or a cut copy
  (`.detach()`, `.data`, `.item()`);
- `history`: it carries the operand's autograd graph (the same cases: integer results record nothing);
- `same_values`: it holds the operand's elements unchanged (moves, floating casts, copies, cuts, marks,
  `.contiguous()`), and `shares_storage` when it is the same memory (`.detach()`, `.data`);
- `reshaped`: the same elements in another shape or a part of them (views, reshapes, indexing);
- `device`: where the result lives ("host", "accelerator", "argument" for `.to(x)`), None when it stays;
- `tensor`: still a tensor (`.item()`, `.tolist()`, `.numpy()` are Python or numpy data, `.shape` is metadata).

Containers keep what they hold: a comprehension's elements are its element expression
(`[f.requires_grad_() for f in feats]`), a loop over a container or a `zip` of containers draws what was
put in (`element_source`), a tuple display unpacked into names binds each name to its element (`assigned`).

Operations not in the table compute something new (arithmetic, reductions, a model): the parts decide
what those keep. `.to(...)` and `.type(...)` depend on their argument (`.to(torch.long)` is an integer
cast): `method(name, call)` reads it. Casts to a dtype the code names through a variable are taken as
floating: an unknown dtype never proves that a gradient was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

import libcst as cst

Qualify = Callable[[cst.BaseExpression], Optional[str]]


@dataclass(frozen=True)
class TorchOp:
    kind: str  # move, cast, integer, view, copy, cut, python, metadata, mark
    grad: bool = True
    history: bool = True
    same_values: bool = False
    shares_storage: bool = False
    reshaped: bool = False
    device: Optional[str] = None
    tensor: bool = True


_MOVE = TorchOp("move", same_values=True)
_TO_HOST = replace(_MOVE, device="host")
_TO_ACCELERATOR = replace(_MOVE, device="accelerator")
_FLOAT_CAST = TorchOp("cast", same_values=True)
_INTEGER = TorchOp("integer", grad=False, history=False)
_VIEW = TorchOp("view", reshaped=True)
_SAME_SHAPE_VIEW = TorchOp("view", same_values=True, shares_storage=True)
_COPY = TorchOp("copy", same_values=True)
_CUT = TorchOp("cut", grad=False, history=False, same_values=True, shares_storage=True)
_PYTHON = TorchOp("python", grad=False, history=False, device="host", tensor=False)
_METADATA = TorchOp("metadata", grad=False, history=False, tensor=False)
_MARK = TorchOp("mark", same_values=True, shares_storage=True)  # `requires_grad_`: grad is the call's argument
_CONTAINER = TorchOp("container")  # a comprehension's elements: `[f.cuda() for f in feats]` holds what `f.cuda()` is

# Tensor methods (`x.name(...)`) and the attributes in `ATTRIBUTES`, by name.
METHODS: dict[str, TorchOp] = {
    **dict.fromkeys(("cuda", "xpu", "mps", "npu"), _TO_ACCELERATOR),
    **dict.fromkeys(("cpu", "pin_memory"), _TO_HOST),
    "to": replace(_MOVE, device="argument"),
    **dict.fromkeys(("float", "double", "half", "bfloat16", "type_as"), _FLOAT_CAST),
    "type": _FLOAT_CAST,  # `x.type(torch.LongTensor)` is read from its argument
    # integer and boolean results: autograd records nothing for them
    **dict.fromkeys(
        ("long", "int", "short", "byte", "char", "bool", "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt",
         "ge", "le", "greater", "less", "equal", "nonzero", "isnan", "isinf", "isfinite", "isclose", "logical_not",
         "logical_and", "logical_or", "sign", "round", "floor", "ceil", "trunc"),
        _INTEGER,
    ),
    **dict.fromkeys(
        ("view", "reshape", "resize", "resize_", "squeeze", "unsqueeze", "permute", "transpose", "t", "flatten",
         "unflatten", "expand", "expand_as", "narrow", "select", "movedim", "swapaxes", "index_select",
         "masked_select", "gather", "repeat", "tile"),
        _VIEW,
    ),
    **dict.fromkeys(("contiguous", "view_as", "reshape_as"), _SAME_SHAPE_VIEW),
    "clone": _COPY,
    **dict.fromkeys(("detach", "detach_"), _CUT),
    **dict.fromkeys(("item", "tolist", "numpy"), _PYTHON),
    **dict.fromkeys(
        ("size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset",
         "get_device", "data_ptr", "is_contiguous", "is_floating_point", "is_complex"),
        _METADATA,
    ),
    "requires_grad_": _MARK,
}
ATTRIBUTES: dict[str, TorchOp] = {
    "data": _CUT,
    "T": _VIEW,
    "mT": _VIEW,
    **dict.fromkeys(
        ("shape", "ndim", "dtype", "device", "layout", "is_cuda", "requires_grad", "itemsize", "nbytes", "grad_fn",
         "is_leaf"),
        _METADATA,
    ),
}
# torch functions that are the same operation on their first argument (`torch.flatten(x, 1)`).
FUNCTIONS: dict[str, TorchOp] = {
    f"torch.{name}": METHODS[name]
    for name in ("argmax", "argmin", "argsort", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite",
                 "isclose", "logical_not", "sign", "round", "floor", "ceil", "trunc", "reshape", "squeeze",
                 "unsqueeze", "permute", "transpose", "t", "flatten", "unflatten", "narrow", "select", "movedim",
                 "swapaxes", "index_select", "masked_select", "gather", "clone", "detach", "numel")
}
# Legacy wrappers that hold a tensor as it is (`Variable(t)` is `t` since torch 0.4); `requires_grad=True`
# makes the result require grad.
WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# dtypes of integer or boolean tensors (`.to(torch.long)`, `.type(torch.LongTensor)`, `.type("torch.IntTensor")`)
_INTEGER_DTYPES = frozenset(
    {"long", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "short", "bool",
     "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor"}
)


def method(name: str, call: Optional[cst.BaseExpression] = None) -> Optional[TorchOp]:
    """The table's entry for `x.name(...)` (`call` is the call node, read for `.to`/`.type`), or None."""
    op = METHODS.get(name)
    if op is None or type(call) is not cst.Call or name not in ("to", "type"):
        return op
    if any(_names_integer_dtype(arg.value) for arg in call.args if arg.keyword is None or arg.keyword.value == "dtype"):
        return _INTEGER
    return op


def attribute(name: str) -> Optional[TorchOp]:
    """The table's entry for `x.name` (no call), or None."""
    return ATTRIBUTES.get(name)


def function(qualified: str) -> Optional[TorchOp]:
    """The table's entry for a torch function applied to its first argument (`torch.argmax(x)`), or None."""
    return FUNCTIONS.get(qualified)


def is_wrapper(qualified: Optional[str]) -> bool:
    return qualified in WRAPPERS


def _names_integer_dtype(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Attribute:
        return expr.attr.value in _INTEGER_DTYPES
    if type(expr) is cst.SimpleString:
        return expr.raw_value.rsplit(".", 1)[-1] in _INTEGER_DTYPES
    return False


def step(expr: cst.BaseExpression, qualify: Optional[Qualify] = None) -> Optional[tuple[cst.BaseExpression, TorchOp]]:
    """One table operation at the top of `expr` and its operand: `x.cuda()` -> (`x`, move), `x[0]` ->
    (`x`, view), `x.data` -> (`x`, cut), `x > 0` -> (`x`, integer), `torch.flatten(x, 1)` and `Variable(x)`
    -> (`x`, ...); None otherwise.
    Without `qualify`, torch functions and wrappers are not recognised (a method is any attribute call)."""
    kind = type(expr)  # exact types (libcst has no subclass of them): every value a rule strips is asked
    if kind is cst.Subscript:
        return expr.value, _VIEW  # type: ignore[attr-defined]
    if kind is cst.Comparison:
        return expr.left, _INTEGER  # type: ignore[attr-defined]  # `x > 0`, `x == y`: a boolean tensor
    if kind is cst.ListComp or kind is cst.GeneratorExp or kind is cst.SetComp:
        return expr.elt, _CONTAINER  # type: ignore[attr-defined]
    if kind is cst.DictComp:
        return expr.value, _CONTAINER  # type: ignore[attr-defined]
    if kind is cst.Attribute:
        op = attribute(expr.attr.value)  # type: ignore[attr-defined]
        return (expr.value, op) if op is not None and (qualify is None or qualify(expr) is None) else None  # type: ignore[attr-defined]
    if kind is not cst.Call:
        return None
    qualified = qualify(expr.func) if qualify is not None else None  # type: ignore[attr-defined]
    if qualified:
        positional = [arg.value for arg in expr.args if arg.keyword is None and not arg.star]  # type: ignore[attr-defined]
        op = function(qualified) or (_COPY if is_wrapper(qualified) else None)
        return (positional[0], op) if op is not None and positional else None
    if type(expr.func) is cst.Attribute:  # type: ignore[attr-defined]
        op = method(expr.func.attr.value, expr)  # type: ignore[attr-defined]
        if op is not None:
            if expr.func.attr.value == "type" and not expr.args:  # type: ignore[attr-defined]
                return None  # `x.type()` is the type's name
            return expr.func.value, op  # type: ignore[attr-defined]
    return None


def grad_operand(expr: cst.BaseExpression, qualify: Optional[Qualify] = None) -> Optional[cst.BaseExpression]:
    """The innermost expression whose requires-grad `expr` has, through operations that keep it:
    `Variable(y).cuda().view(-1)[0]` -> `y`; `torch.tensor(y, requires_grad=True).float()` -> the
    `torch.tensor(...)` call (a `requires_grad_()` or a `requires_grad=` keyword decides there). None
    when some operation on the way drops it (`y.long()`, `y.detach()`, `y.argmax(1)`, `y > 0`)."""
    while True:
        if _marks(expr):
            return expr
        found = step(expr, qualify)
        if found is None:
            return expr
        operand, op = found
        if not op.grad:
            return None
        expr = operand


def history_operand(expr: cst.BaseExpression, qualify: Optional[Qualify] = None) -> Optional[cst.BaseExpression]:
    """Like `grad_operand`, for the autograd graph: `loss.view(1).float()` -> `loss`; None for `loss.item()`."""
    while True:
        found = step(expr, qualify)
        if found is None:
            return expr
        operand, op = found
        if not op.history:
            return None
        expr = operand


def _marks(expr: cst.BaseExpression) -> bool:
    """`x.requires_grad_(...)` or a call with a `requires_grad=` keyword: it sets the flag, whatever it held."""
    if type(expr) is not cst.Call:
        return False
    if type(expr.func) is cst.Attribute and expr.func.attr.value == "requires_grad_":  # type: ignore[attr-defined]
        return True
    return any(arg.keyword is not None and arg.keyword.value == "requires_grad" for arg in expr.args)


def unpacked(value: cst.BaseExpression, position: tuple[int, ...]) -> Optional[cst.BaseExpression]:
    """The element of a displayed tuple or list that an unpacking position receives: `b` for position
    (1,) of `a, b = x, y`... through nested displays; None when the shape does not show it (a starred element)."""
    for index in position:
        if type(value) not in (cst.Tuple, cst.List) or any(type(e) is cst.StarredElement for e in value.elements):
            return None
        if not 0 <= index < len(value.elements):
            return None
        value = value.elements[index].value
    return value


_DISPLAYS = (cst.Tuple, cst.List)


def assigned(node: cst.Assign) -> list[tuple[tuple[str, ...], cst.BaseExpression]]:
    """What an assignment binds to which names: the whole value to its plain name targets, and each
    element of a displayed tuple or list to the name it is unpacked into (`x, y = Variable(a),
    Variable(b, requires_grad=True)` binds `y` to the second call)."""
    # exact types (libcst has no subclass of them): two parts ask of every assignment of the file
    pairs = [(tuple(t.target.value for t in node.targets if type(t.target) is cst.Name), node.value)]  # type: ignore[attr-defined]
    for target in node.targets:
        elements = target.target.elements if type(target.target) in _DISPLAYS else ()  # type: ignore[attr-defined]
        shown = node.value.elements if type(node.value) in _DISPLAYS else ()  # type: ignore[attr-defined]
        if len(elements) != len(shown):
            continue
        for position, element in enumerate(elements):
            value = unpacked(node.value, (position,))
            if type(element.value) is cst.Name and value is not None:
                pairs.append(((element.value.value,), value))
    return pairs


def element_source(iterable: cst.BaseExpression, position: tuple[int, ...]) -> Optional[cst.BaseExpression]:
    """What a loop target at an unpacking position takes elements of: `out` for `row` in `for i, row in
    zip(ids, out)` or `for j, (i, row) in enumerate(zip(ids, out))`; None for an `enumerate` counter. A
    container keeps what it holds: an element of it is what was put in."""
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and position:  # type: ignore[attr-defined]
        positional = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
        if iterable.func.value == "enumerate" and positional:
            return element_source(positional[0], position[1:]) if position[0] == 1 else None
        if iterable.func.value == "zip" and 0 <= position[0] < len(positional):
            return element_source(positional[position[0]], position[1:])
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "enumerate":  # type: ignore[attr-defined]
        return iterable.args[0].value if iterable.args else None
    return iterable
