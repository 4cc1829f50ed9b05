"""Host-built tensors: values the code builds in host memory and that do not change between uses.

`is_host_built(value, names, values, returned=None)`: the expression is a tensor built on the host by
torch factories without `device=` (`torch.ones(n)`, `torch.tril(...)`, `torch.tensor(data)`,
`torch.from_numpy(a)`), or computed from such tensors and Python data by torch functions, arithmetic and
their own methods and comparisons (`torch.sin(torch.arange(n).float() / d)`, `freqs.cos()`, `idx <= w`),
through views, casts and
names (every binding that may reach a name must be one). A call of a function or method (of this file,
or of another scanned file) counts when its summary says it returns one (`returned`: the `summaries`
part's `returned_facts`, whose `ValueFacts.host_built` is this fact, so `self.mask = self._make_mask(n)`
is host-built when `_make_mask` returns `torch.tril(torch.ones(n, n))`). Anything placed on an
accelerator, made to require grad, or built with a `device=` is not: unknown is not host-built.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.flow.values import TORCH_FACTORIES, Values
from stabfix.model.source.names import Names

HOST_BUILDERS = frozenset({f"torch.{name}" for name in TORCH_FACTORIES | {"tensor", "as_tensor", "from_numpy", "tril",
                                                                             "triu", "FloatTensor", "LongTensor"}
                           if not name.endswith("_like")})
# methods whose result is no longer the host tensor they are called on (moved, or Python data)
_LEAVING = frozenset({"to", "cuda", "pin_memory", "item", "tolist", "numpy"})
_MAX_DEPTH = 6

Returned = Callable[[cst.Call], Optional[Sequence[object]]]


def is_host_built(value: cst.BaseExpression, names: Names, values: Values, returned: Optional[Returned] = None,
                  depth: int = 0) -> bool:
    if depth > _MAX_DEPTH or values.value_of(value).placed:
        return False
    peeled = torch_ops.step(value, names.qualify)  # `t[None, :]`, `t.view(...)`, `t.float()`: the same values
    if peeled is not None and peeled[1].kind in ("view", "cast", "integer"):
        return is_host_built(peeled[0], names, values, returned, depth + 1)
    if type(value) is cst.Call:
        return _call_builds(value, names, values, returned, depth)
    if type(value) is cst.BinaryOperation:
        return is_host_built(value.left, names, values, returned, depth + 1) or \
            is_host_built(value.right, names, values, returned, depth + 1)
    if type(value) is cst.Comparison:  # `positions <= window`: a host bool tensor
        return is_host_built(value.left, names, values, returned, depth + 1)
    if type(value) is cst.UnaryOperation:
        return is_host_built(value.expression, names, values, returned, depth + 1)
    if type(value) is cst.Name and value in names.uses:
        bindings = names.reaching(value)
        return bool(bindings) and all(b.bound_value is not None and is_host_built(b.bound_value, names, values, returned, depth + 1)
                                      for b in bindings)
    return False


def _call_builds(call: cst.Call, names: Names, values: Values, returned: Optional[Returned], depth: int) -> bool:
    qualified = names.qualify(call.func) or ""
    if any(arg.keyword is not None and arg.keyword.value in ("device", "requires_grad") for arg in call.args):
        return False
    if qualified in HOST_BUILDERS:
        return True
    facts = returned(call) if returned is not None and not qualified.startswith("torch.") else None
    if facts is not None:  # a function or method whose summary says what it returns
        return len(facts) == 1 and getattr(facts[0], "host_built", None) is True
    if type(call.func) is cst.Attribute and not qualified and call.func.attr.value not in _LEAVING:
        return is_host_built(call.func.value, names, values, returned, depth + 1)  # `freqs.cos()`
    return qualified.startswith("torch.") and not qualified.startswith("torch.nn") \
        and any(is_host_built(arg.value, names, values, returned, depth + 1) for arg in call.args)
