"""What the `values` part knows of one value (`Value`), and what a function returns for another file's model to
hand over (`ReturnedValues`, `ParameterPassage`): node-free records, with the two helpers that read a call's
arguments and a returned tuple's elements."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple, Optional

import libcst as cst


@dataclass(frozen=True)
class Value:
    tensor: bool = False  # certainly a tensor
    not_tensor: bool = False  # a literal, Python or numpy data, tensor metadata
    metadata: bool = False  # `.shape`, `.size()`, `.dtype`: about a tensor, not one
    host: bool = False  # in host memory
    placed: bool = False  # put on an accelerator
    snapshot: bool = False  # detached, cloned or computed with autograd off
    detached: bool = False  # cut from the autograd graph
    constant: bool = False  # built only by factories or from Python data: a constant table
    parameter: bool = False  # a model's parameters, buffers or gradients
    reduced: bool = False  # a loss or a reduction to one number
    model_output: bool = False  # what calling a model returned
    batch: bool = False  # drawn from a DataLoader
    call: bool = False  # the result of a call the model cannot see into
    grouped: bool = False  # a tuple/list display of such values kept together (`(emb, mask)`)

    @property
    def host_or_bookkeeping(self) -> bool:
        """Not a device tensor worth keeping track of: in host memory, not a tensor, a constant table,
        a model's parameters, or a loss/reduction."""
        return self.host or self.not_tensor or self.constant or self.parameter or self.reduced

    @staticmethod
    def join(values: list["Value"]) -> "Value":
        """What holds for a name that may hold any of these values: "certainly" facts need all of them,
        facts that silence a finding (host, constant...) are kept when any binding shows them."""
        if not values:
            return Value()
        if len(values) == 1:
            return values[0]  # each fact as it is (a name with one binding reaching it: the usual case)
        anyof = {name: any(getattr(v, name) for v in values) for name in _FACTS}
        anyof["not_tensor"] = all(v.not_tensor for v in values)
        anyof["metadata"] = all(v.metadata for v in values)
        anyof["constant"] = anyof["constant"] and all(v.constant or v.not_tensor for v in values)
        anyof["batch"] = all(v.batch for v in values)
        return Value(**anyof)


_FACTS = tuple(f.name for f in fields(Value))  # what `Value.join` joins (dataclasses' `fields` builds a tuple per call)


@dataclass(frozen=True)
class ParameterPassage:
    """A returned value that is one of the function's parameters, or an element or attribute of one
    (`return batch[0], batch[1]`): at a call, it is what the call passes there, through the same steps."""

    index: int  # among the positional parameters
    name: str
    steps: tuple[str, ...]  # `[]` and `.attr` steps, innermost first

class ReturnedValues(NamedTuple):
    """What a function returns: the value of its result, and of each element when every `return` is a
    tuple display of the same length (`return x, y`); node-free, so another file's model can hand it over."""

    whole: Value
    elements: tuple[Value, ...]
    # where every `return` passes the same part of a parameter: the result, and each element
    whole_passage: Optional[ParameterPassage] = None
    passages: tuple[Optional[ParameterPassage], ...] = ()


def argument_at(call: cst.Call, index: int, parameter: str) -> Optional[cst.BaseExpression]:
    """What a call of a plain function passes for its `index`-th positional parameter `parameter`; None when
    not shown (a default, `*args`, `**kwargs`)."""
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
        if arg.keyword is None and position == index:
            return arg.value
    return None


def element_at(expr: cst.BaseExpression, position: tuple[int, ...]) -> Optional[cst.BaseExpression]:
    """The part of a returned tuple that lands at an unpacking position (None when not visible)."""
    for index in position:
        if type(expr) not in (cst.Tuple, cst.List) or index < 0 or index >= len(expr.elements):
            return None
        if any(type(e) is cst.StarredElement for e in expr.elements):
            return None
        expr = expr.elements[index].value
    return expr
