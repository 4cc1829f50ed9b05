"""Attention-style masks: whether a mask is shown to leave every row at least one position (SF306).

A helper over the `names` part, asked after the traversal:

- `keeps_a_position(mask, filled, names, attribute_values)`: the mask cannot cover a whole row, because
  - it is causal: something triangular in its origin (`torch.tril`, `ones(...).triu(1)`,
    `generate_square_subsequent_mask`), through names, `self.<attr>` values (`attribute_values`: what the
    file assigns or registers as a buffer under that attribute, whatever the receiver is called) and
    the expressions around it (`self.bias[:, :, :T, :T] == 0`), and the returns of the file's functions
    it calls (`future = causal_mask(T)`): each row keeps its diagonal;
  - or it is a threshold of the filled tensor from its own top values (`logits < pivot` with `pivot` taken
    from `torch.topk(logits, k)`, `logits.max(...)`, `kthvalue`, `sort`, also through a function of the file
    handed `logits`): every row keeps its largest entry.
  Anything else (a padding mask, an adjacency matrix, a mask handed in by a caller) may cover a row.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.origins import passed_argument
from stabfix.model.source.node_fields import children

CAUSAL_BUILDERS = frozenset({"tril", "triu", "tril_", "triu_", "generate_square_subsequent_mask", "tril_indices", "triu_indices"})
TOP_VALUES = frozenset({"topk", "kthvalue", "max", "amax", "sort"})
MAX_DEPTH = 12

AttributeValues = Callable[[str], list[cst.BaseExpression]]


def keeps_a_position(mask: cst.BaseExpression, filled: cst.BaseExpression, names: Names,
                     attribute_values: AttributeValues) -> bool:
    return _causal(mask, names, attribute_values, 0) or _below_own_top(mask, filled, names)


def _causal(expr: cst.BaseExpression, names: Names, attribute_values: AttributeValues, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    func = expr.func if type(expr) is cst.Call else None
    if type(func) is cst.Attribute and func.attr.value in CAUSAL_BUILDERS:
        return True  # `torch.tril(...)`, `ones(...).triu(1)`
    if type(func) is cst.Name and (names.qualify(func) or func.value).rpartition(".")[2] in CAUSAL_BUILDERS:
        return True  # `from torch import tril`
    if type(expr) is cst.Name and expr in names.uses:
        value = names.single_value(expr)
        return value is not None and value is not expr and _causal(value, names, attribute_values, depth + 1)
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and names.receiver_class(expr.value) is not None:
        values = attribute_values(expr.attr.value)  # an attribute of the instance, whatever its receiver is called
        if values:
            return any(_causal(value, names, attribute_values, depth + 1) for value in values)
    function = names.definition_of(expr) if type(expr) is cst.Call else None
    returned = names.returns.get(function, []) if function is not None else []
    if returned and all(value is not None and _causal(value, names, attribute_values, depth + 1) for value in returned):
        return True  # a function of the file that builds the triangle (`future = causal_mask(T)`)
    return any(_causal(child, names, attribute_values, depth + 1) for child in children(expr)
               if isinstance(child, cst.BaseExpression))


def _below_own_top(mask: cst.BaseExpression, filled: cst.BaseExpression, names: Names) -> bool:
    """`x < t` (or `t > x`) with `t` from the top values of `x` itself: the row maximum is never below it."""
    if type(mask) is not cst.Comparison or len(mask.comparisons) != 1:
        return False
    target = mask.comparisons[0]
    spelled = dotted_name(filled)
    if type(target.operator) is cst.LessThan:
        tensor, threshold = mask.left, target.comparator
    elif type(target.operator) is cst.GreaterThan:
        tensor, threshold = target.comparator, mask.left
    else:
        return False
    return spelled is not None and dotted_name(tensor) == spelled and _top_values_of(threshold, spelled, names, 0)


def _held(binding) -> cst.BaseExpression | None:
    """What a binding holds; for `top, idx = torch.topk(x, k)`, the call (its element 0 is the values)."""
    if binding.kind == "unpack" and binding.element is None and binding.position[:1] == (0,):
        return binding.value
    return binding.bound_value


def _top_values_of(expr: cst.BaseExpression, spelled: str, names: Names, depth: int) -> bool:
    if depth > 6:
        return False
    if type(expr) is cst.Name and expr in names.uses:
        binding = names.reaching(expr)
        values = [value for value in map(_held, binding) if value is not None]
        return bool(values) and len(values) == len(binding) and all(
            _top_values_of(value, spelled, names, depth + 1) for value in values)
    if type(expr) is cst.Call:
        func = expr.func
        method = func.attr.value if type(func) is cst.Attribute else None
        qualified = names.qualify(func) or ""
        if method in TOP_VALUES and dotted_name(func.value) == spelled:  # type: ignore[union-attr]
            return True  # `logits.topk(k)`, `logits.max(-1, keepdim=True)`
        if qualified.rpartition(".")[2] in TOP_VALUES and qualified.startswith("torch.") and expr.args:
            return dotted_name(expr.args[0].value) == spelled  # `torch.topk(logits, k)`
        function = names.definition_of(expr)
        parameter = _parameter_given(function, expr, spelled) if function is not None else None
        returned = names.returns.get(function, []) if parameter is not None else []
        if returned and all(value is not None and _top_values_of(value, parameter, names, depth + 1) for value in returned):
            return True  # a function of the file returning the top values of what it is handed (`top_k(logits, k)`)
    return any(_top_values_of(child, spelled, names, depth + 1) for child in children(expr)
               if isinstance(child, cst.BaseExpression))


def _parameter_given(function: cst.FunctionDef, call: cst.Call, spelled: str) -> str | None:
    """The parameter of `function` that `call` hands the expression spelled `spelled`."""
    params = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
    for param in params:
        passed = passed_argument(function, call, param)
        if passed is not None and dotted_name(passed) == spelled:
            return param
    return None
