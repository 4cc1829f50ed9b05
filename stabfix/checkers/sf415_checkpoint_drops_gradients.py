"""SF415 checkpoint-drops-gradients: reentrant activation checkpointing around a segment none of whose
tensor inputs requires grad, so the parameters inside the segment get no gradient.

A query over `values` and `names` through `grad_inputs` (why a tensor is shown never to require grad: a
batch, token ids, a detached or `no_grad` value, a constant, a frozen embedding's output): a call of
`torch.utils.checkpoint.checkpoint(fn, *inputs)` or `checkpoint_sequential(fns, segments, input)` that
runs the reentrant implementation (`use_reentrant=True`, or the argument left out: the old default;
DeepSpeed's `checkpointing.checkpoint` always) and whose every tensor input is shown not to require
grad. An input the code does not show (a parameter of the function, a model's activation) keeps it
silent. Fix (unsafe): `use_reentrant=False`, which records the segment's parameters whatever its inputs.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for
from stabfix.model.domain.grad_inputs import GradInputs
from stabfix.shape import Shape
from stabfix.shape_names import imported_names

_CHECKPOINT = "torch.utils.checkpoint.checkpoint"
_SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"
_ALWAYS_REENTRANT = frozenset({"deepspeed.checkpointing.checkpoint", "deepspeed.runtime.activation_checkpointing.checkpointing.checkpoint"})
_MAX_TEXT = 60


class CheckpointDropsGradients(Checker):
    code = "SF415"
    tokens = ("checkpoint",)
    # the call resolves through this file's imports to a `checkpoint` module or function of torch or deepspeed
    words = (("checkpoint",), ("torch", "deepspeed"))
    needs = ("names", "values")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a call this file's imports name torch's or DeepSpeed's checkpoint (`qualified_name`), with no
        # `*args`/`**kw`, a tensor input after the segment, and `use_reentrant` left out or `True` (DeepSpeed's: any)
        wanted = {_CHECKPOINT, _SEQUENTIAL, *_ALWAYS_REENTRANT}
        spelled = {"checkpoint", "checkpoint_sequential"} | {
            local for local in shape.imported_names if imported_names(shape, ast.Name(local)) & wanted}
        for call in shape.calls(*spelled):
            qualified = imported_names(shape, call.func) & wanted
            if not qualified or any(type(arg) is ast.Starred for arg in call.args) or any(k.arg is None for k in call.keywords):
                continue
            given = [k.value for k in call.keywords if k.arg == "use_reentrant"]
            if given and qualified.isdisjoint(_ALWAYS_REENTRANT) and not (type(given[0]) is ast.Constant and given[0].value is True):
                continue
            if len(call.args) >= 2 or any(k.arg == "input" for k in call.keywords):
                return True
        return False

    def __init__(self, context) -> None:
        super().__init__(context)
        self._calls: list[tuple[cst.Call, str, Optional[cst.FunctionDef], Optional[cst.ClassDef]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified_name(node.func) or ""
        if qualified in (_CHECKPOINT, _SEQUENTIAL) or qualified in _ALWAYS_REENTRANT:
            enclosing = self.model.enclosing
            self._calls.append((node, qualified, enclosing.innermost_function(), enclosing.innermost_class()))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._calls:
            return
        inputs = GradInputs(original_node, self.model.names, self.model.values, self.model.imports)
        for call, qualified, function, cls in self._calls:
            how = _reentrant(call, qualified)
            if how is None:
                continue
            tensors = self._tensor_inputs(call, qualified)
            if not tensors:
                continue
            reasons = [inputs.without_grad(arg, function, cls) for arg in tensors]
            if any(reason is None for reason in reasons):
                continue
            self.report(call, _message(call, how, tensors[0], reasons[0], len(tensors)), _fix(call, qualified))

    def _tensor_inputs(self, call: cst.Call, qualified: str) -> list[cst.BaseExpression]:
        """The segment's inputs that may be tensors (literals and Python data left out); empty when a
        `*args` hides them."""
        if any(arg.star for arg in call.args):
            return []
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if qualified == _SEQUENTIAL:
            keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "input"]
            found = positional[2:3] or keyword
        else:
            found = positional[1:]
        return [value for value in found if not self.model.values.value_of(value).not_tensor]


def _reentrant(call: cst.Call, qualified: str) -> Optional[str]:
    """How the call runs the reentrant implementation, or None when it does not (or the code decides at run time)."""
    if qualified in _ALWAYS_REENTRANT:
        return "DeepSpeed's checkpoint is always reentrant"
    given = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "use_reentrant"]
    if not given:
        return "`use_reentrant` is left out, so the old default `True` applies"
    if type(given[0]) is cst.Name and given[0].value == "True":
        return "`use_reentrant=True`"
    return None


def _fix(call: cst.Call, qualified: str) -> Optional[Fix]:
    if qualified in _ALWAYS_REENTRANT:
        return None
    false = cst.Name("False")
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "use_reentrant":
            return Fix("unsafe", "checkpoint with `use_reentrant=False`", {arg.value: false})
    last = call.args[-1]
    comma = last.comma if type(last.comma) is cst.Comma else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    added = cst.Arg(value=false, keyword=cst.Name("use_reentrant"), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if type(last.comma) is cst.Comma:  # a trailing comma stays after the new argument
        added = added.with_changes(comma=last.comma)
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new_args = [*call.args[:-1], last.with_changes(comma=comma), added]
    return Fix("unsafe", "checkpoint with `use_reentrant=False`", {call: call.with_changes(args=new_args)})


def _message(call: cst.Call, how: str, first: cst.BaseExpression, reason: str, count: int) -> str:
    segment = _text(call.args[0].value) if call.args else "the segment"
    inputs = "its only tensor input" if count == 1 else f"none of its {count} tensor inputs requires grad:"
    return (
        f"`{_text(call.func)}(...)` runs the reentrant checkpoint ({how}) and {inputs} `{_text(first)}` is {reason}"
        f"{', so it does not require grad' if count == 1 else ''}; the reentrant implementation then cuts the segment "
        f"from the graph and the parameters inside `{segment}` get no gradient (adapters or layers there never train); "
        f"pass `use_reentrant=False`, or make the input require grad"
    )


def _text(node: cst.CSTNode) -> str:
    code = " ".join(code_for(node).split())
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
