"""What the branches around a site say about a tensor's dtype.

`if logits.dtype in [torch.float32, torch.float64]: ... else: <here>` lets only half-precision logits
reach `<here>`. `known_dtypes(expr, frames, place, names)` answers, for a site with the `steps` frames and
place it was recorded with: the floating dtypes (`float16`, `bfloat16`, `float32`, `float64`) the tensor
`expr` can have there, or None when no branch says. It reads the tests of the `if`/`elif`/`else` and
conditional expressions around the site and of the earlier `if <test>: return/raise/continue/break`
statements of its function, when a test compares the `.dtype` of the same tensor with torch dtypes
(`==`, `!=`, `is`, `in`, `not in`, `not`, `and`/`or`). "The same tensor" follows what keeps a dtype: names,
slices, views (`.view`, `.reshape`, `.squeeze`...), the rows of a `for` loop over it (also through `zip`
and `enumerate`); a cast (`.float()`) or arithmetic is another tensor.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names
from stabfix.model.source.places import Place, enclosing_statement
from stabfix.model.source.syntax import node_code
from stabfix.model.training.gates import earlier_jump_guards
from stabfix.model.training.step_frames import BranchFrame, Frame, FunctionFrame

FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
HALF = frozenset({"float16", "bfloat16"})
_TORCH_DTYPES = {
    "torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
    "torch.float32": "float32", "torch.float": "float32", "torch.float64": "float64", "torch.double": "float64",
}
_OTHER_TORCH_DTYPES = frozenset(
    f"torch.{name}" for name in (
        "int8", "int16", "int32", "int64", "int", "long", "short", "uint8", "bool", "complex64", "complex128",
        "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2",
    )
)
# methods whose result has the dtype of the tensor they are called on (no cast, no arithmetic)
_SAME_DTYPE_METHODS = frozenset({
    "view", "reshape", "contiguous", "squeeze", "unsqueeze", "transpose", "permute", "flatten", "narrow",
    "select", "detach", "clone", "expand", "expand_as", "view_as", "reshape_as", "t",
})

Key = tuple


def known_dtypes(expr: cst.BaseExpression, frames: tuple[Frame, ...], place: Place, names: Names) -> Optional[frozenset[str]]:
    """The floating dtypes `expr` can have at the site, when a dtype test around it says; None otherwise."""
    key = _key(dtype_source(expr, names), names)
    known: Optional[frozenset[str]] = None
    for test, truth in _tests(frames, place):
        dtypes = _facts(test, truth, names).get(key)
        if dtypes is not None:
            known = dtypes if known is None else known & dtypes
    return known


def only_half(dtypes: Optional[frozenset[str]]) -> bool:
    """A branch that admits half-precision tensors and never float32 (`else` of a float32/float64 test,
    `== torch.bfloat16`, `!= torch.float32`)."""
    return dtypes is not None and bool(dtypes & HALF) and "float32" not in dtypes


def dtype_source(expr: cst.BaseExpression, names: Names, depth: int = 0) -> cst.BaseExpression:
    """The tensor `expr` has its dtype from: `row` of `for row, y in zip(logits, ys)` is `logits`."""
    while depth < 12:
        depth += 1
        if type(expr) is cst.Subscript:
            expr = expr.value
        elif (
            type(expr) is cst.Call
            and type(expr.func) is cst.Attribute
            and expr.func.attr.value in _SAME_DTYPE_METHODS
            and not any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in expr.args)
        ):
            expr = expr.func.value
        elif type(expr) is cst.Name and expr in names.uses:
            reaching = names.reaching(expr)
            if len(reaching) != 1:
                return expr
            binding = reaching[0]
            if binding.bound_value is not None:
                expr = binding.bound_value
            elif binding.kind == "for" and binding.value is not None:
                element = _iterated(binding.value, binding.position, names)
                if element is None:
                    return expr
                expr = element
            else:
                return expr
        else:
            return expr
    return expr


def _iterated(iterable: cst.BaseExpression, position: tuple[int, ...], names: Names) -> Optional[cst.BaseExpression]:
    """The tensor whose rows the loop target at `position` takes: `x` for `for r in x`, `for r, _ in zip(x, y)`,
    `for _, r in enumerate(x)`."""
    if not position:
        return iterable
    if type(iterable) is cst.Call and not any(arg.star for arg in iterable.args):
        builtin = type(iterable.func) is cst.Name and names.qualify(iterable.func) is None
        iterated = [arg.value for arg in iterable.args if arg.keyword is None]  # `zip(..., strict=True)`, `enumerate(x, start=1)`
        if builtin and iterable.func.value == "zip" and position[0] < len(iterated):  # type: ignore[union-attr]
            return iterated[position[0]] if len(position) == 1 else None
        if builtin and iterable.func.value == "enumerate" and position == (1,) and iterated:  # type: ignore[union-attr]
            return iterated[0]
    return None


def _key(expr: cst.BaseExpression, names: Names, tested: bool = False) -> Key:
    """Which tensor `expr` is: the bindings that may hold at it, or its code. For the tensor a test reads,
    only the bindings made before the test: one made after it (`x = x.float()` in the branch) holds another."""
    if type(expr) is cst.Name and expr in names.uses:
        reaching = names.reaching(expr)
        if tested:
            reaching = [binding for binding in reaching if binding.order < names.uses[expr].order]
        if reaching:
            return ("bindings", tuple(sorted(id(binding) for binding in reaching)))
    return ("code", node_code(expr))


def _tests(frames: tuple[Frame, ...], place: Place):
    """(test, whether it held) for every branch around the site and every earlier early exit of its function."""
    for frame in frames:
        if isinstance(frame, BranchFrame) and type(frame.node) in (cst.If, cst.IfExp) and frame.kind in ("if", "else"):
            yield frame.node.test, frame.kind == "if"
    function = next((frame.node for frame in reversed(frames) if isinstance(frame, FunctionFrame)), None)
    statement = enclosing_statement(place)
    if function is not None and statement is not None:
        for test in earlier_jump_guards(place, statement, function):
            yield test, False


def _facts(test: cst.BaseExpression, truth: bool, names: Names) -> dict[Key, frozenset[str]]:
    """What `test` evaluating to `truth` says about dtypes: tensor key -> the floating dtypes it can have."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _facts(test.expression, not truth, names)
    if type(test) is cst.BooleanOperation:
        # both sides hold after a true `and`, both fail after a false `or`; otherwise either may have decided
        if (type(test.operator) is cst.And) == truth:
            left, right = _facts(test.left, truth, names), _facts(test.right, truth, names)
            return {key: left.get(key, FLOATS) & right.get(key, FLOATS) for key in left.keys() | right.keys()}
        return {}
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return {}
    target = test.comparisons[0]
    operator, left, right = target.operator, test.left, target.comparator
    if _dtype_read(right) is not None and _dtype_read(left) is None and type(operator) not in (cst.In, cst.NotIn):
        left, right = right, left  # `torch.bfloat16 == x.dtype`
    tensor = _dtype_read(left)
    if tensor is None:
        return {}
    if type(operator) in (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot):
        listed = _dtypes_named([right], names)
        positive = type(operator) in (cst.Equal, cst.Is)
    elif type(operator) in (cst.In, cst.NotIn) and type(right) in (cst.List, cst.Tuple, cst.Set):
        listed = _dtypes_named([element.value for element in right.elements], names)
        positive = type(operator) is cst.In
    else:
        return {}
    if listed is None:
        return {}
    return {_key(dtype_source(tensor, names), names, tested=True): listed if positive == truth else FLOATS - listed}


def _dtype_read(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` of `x.dtype`."""
    if type(expr) is cst.Attribute and expr.attr.value == "dtype":
        return expr.value
    return None


def _dtypes_named(expressions: list[cst.BaseExpression], names: Names) -> Optional[frozenset[str]]:
    """The floating dtypes among torch dtype literals; None when one of them is not a torch dtype."""
    found: set[str] = set()
    for expression in expressions:
        qualified = names.qualify(expression)
        if qualified in _TORCH_DTYPES:
            found.add(_TORCH_DTYPES[qualified])
        elif qualified not in _OTHER_TORCH_DTYPES:
            return None
    return frozenset(found)
