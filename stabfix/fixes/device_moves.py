"""Moving tensors between the accelerator and host memory, as libcst rewrites.

- `cpu_copy(v)`: what to store instead of an accelerator tensor, `v.detach().to("cpu", copy=True)`;
- `move_back(e, device)`: a read of such a copy, moved back where it is used,
  `e.to(device, non_blocking=True)`;
- `with_map_location(call)`: `torch.load(p)` -> `torch.load(p, map_location="cpu")`, so what was
  saved from an accelerator is loaded into host memory.

The rewrites keep the user's own nodes (comments, line breaks, parentheses) and only add around them.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from stabfix.model.devices import method_chain, to_call_target

Qualify = Callable[[cst.BaseExpression], Optional[str]]

_SNAPSHOT_METHODS = frozenset({"detach", "detach_", "clone"})


def cpu_copy(value: cst.BaseExpression, qualify: Qualify) -> cst.BaseExpression:
    """`x.clone().detach()` -> `x.detach().to("cpu", copy=True)`; keeps any other part of the chain.

    A final move to the accelerator (`.to(device)`, `.cuda()`) is replaced by the move to the CPU (a
    cast it does is kept); parentheses around the whole value stay around the whole new value.
    """
    outer_lpar, outer_rpar = value.lpar, value.rpar
    base = value.with_changes(lpar=[], rpar=[])
    while (
        isinstance(base, cst.Call)
        and isinstance(base.func, cst.Attribute)
        and base.func.attr.value in _SNAPSHOT_METHODS
        and not base.args
        and qualify(base.func) is None
    ):
        base = base.func.value
    base, kept = _without_device_move(base, qualify)
    _, steps = method_chain(base, qualify)
    if not isinstance(base, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not base.lpar:
        base = base.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if not any(name in ("detach", "detach_") for name, _ in steps):
        base = method_call(base, "detach", [])
    moved = method_call(base, "to", [cst.Arg(cst.SimpleString('"cpu"')), *kept, keyword("copy", cst.Name("True"))])
    return moved.with_changes(lpar=outer_lpar, rpar=outer_rpar)


def _without_device_move(value: cst.BaseExpression, qualify: Qualify) -> tuple[cst.BaseExpression, list[cst.Arg]]:
    """`emb.to(device, dtype=torch.float16)` -> (`emb`, [`dtype=torch.float16`])."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.lpar):
        return value, []
    method = value.func.attr.value
    only_non_blocking = all(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in value.args)
    if method == "cuda" and only_non_blocking:
        return value.func.value, []  # `.cuda()`: a move to the current accelerator, nothing else
    if method != "to" or any(arg.star for arg in value.args):
        return value, []
    target, device = to_call_target(value, qualify)
    if target != "device":
        return value, []
    kept = [
        keyword(arg.keyword.value, arg.value) if arg.keyword is not None else cst.Arg(arg.value)
        for arg in value.args
        if arg.value is not device and (arg.keyword is None or arg.keyword.value not in ("copy", "non_blocking"))
    ]
    return value.func.value, kept


def move_back(expression: cst.BaseExpression, device: str) -> cst.BaseExpression:
    """`c[k]` -> `c[k].to(device, non_blocking=True)`; `v.clone()` -> `v.to(device, non_blocking=True, copy=True)`."""
    arguments = [cst.Arg(cst.parse_expression(device)), keyword("non_blocking", cst.Name("True"))]
    if (
        isinstance(expression, cst.Call)
        and isinstance(expression.func, cst.Attribute)
        and expression.func.attr.value == "clone"
    ):
        moved = method_call(expression.func.value, "to", [*arguments, keyword("copy", cst.Name("True"))])
        return moved.with_changes(lpar=expression.lpar, rpar=expression.rpar)
    return method_call(expression, "to", arguments)


def has_map_location(call: cst.Call) -> bool:
    """Whether a `torch.load` call already says where to load (a second positional, `map_location=`, `**kw`)."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return (
        len(positional) > 1
        or any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in call.args)
        or any(arg.star == "**" for arg in call.args)
    )


def with_map_location(call: cst.Call) -> cst.Call:
    """`torch.load(p)` -> `torch.load(p, map_location="cpu")`, keeping a trailing comma where there was one."""
    argument = keyword("map_location", cst.SimpleString('"cpu"'))
    args = list(call.args)
    if args and isinstance(args[-1].comma, cst.Comma):
        return call.with_changes(args=[*args, argument.with_changes(comma=args[-1].comma)])
    return call.with_changes(args=[*args, argument])


def method_call(receiver: cst.BaseExpression, method: str, args: list[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=args)


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spelled without spaces around `=`."""
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space))
