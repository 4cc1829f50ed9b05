"""Learning-rate schedulers: which values are objects that move an optimizer's learning rate.

`is_lr_scheduler(expr, names, optimizers, summaries=None)` answers for an expression (the receiver
of a `.step()`, a returned value) from what the code shows it holds, never from its name:
- a call that builds one: a `torch.optim.lr_scheduler` class, a transformers/diffusers schedule
  factory (`get_linear_schedule_with_warmup`, `get_scheduler`) or a timm scheduler, each resolved
  through the imports and their aliases, or any other constructor handed an optimizer (its first
  argument or `optimizer=`: `WarmupCosine(opt, ...)`) — the optimizer is what ties it to training;
- a call of a function whose summary returns one (`summaries.returned_facts`: role `lr_scheduler`,
  a helper of this file or, through the project index, of another scanned file);
- a name or `self.<attr>` bound to any of these (also through other names);
- a function parameter annotated with a `torch.optim.lr_scheduler` class, or one that a call of the
  file passes such a value for (`summaries.passed_for`).
Anything else is unknown and not a scheduler: a parameter called `scheduler` that no caller in sight
fills, a task or job scheduler, a diffusion sampler's `noise_scheduler` (built without an optimizer).
"""

from __future__ import annotations

import re
from typing import Optional, Protocol, Sequence

import libcst as cst

from stabfix.model.calls.optimizers import OptimizerTracker, Scope
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.scopes import Scope as NameScope

LR_SCHEDULER = "lr_scheduler"  # the `role` a function summary gives a returned scheduler
_TORCH_SCHEDULERS = "torch.optim.lr_scheduler."
_FACTORY = re.compile(r"^(transformers|diffusers)(\..+)?\.get_\w*schedule\w*$|^timm\.scheduler\.\w+$")
_MAX_DEPTH = 4


class _Summaries(Protocol):
    """What this part asks of the `summaries` part (a higher layer, handed in)."""

    def returned_facts(self, call: cst.Call) -> Optional[Sequence[object]]: ...

    def passed_for(self, parameter: Binding) -> Optional[list[cst.BaseExpression]]: ...


def is_lr_scheduler(expr: cst.BaseExpression, names: Names, optimizers: OptimizerTracker,
                    summaries: Optional[_Summaries] = None) -> bool:
    return _holds(expr, names, optimizers, summaries, 0)


def _holds(expr: cst.BaseExpression, names: Names, optimizers: OptimizerTracker,
           summaries: Optional[_Summaries], depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if type(expr) is cst.Call:
        return _builds(expr, names, optimizers, summaries)
    return any(_bound_to_one(binding, names, optimizers, summaries, depth) for binding in _bindings(expr, names))


def _bindings(expr: cst.BaseExpression, names: Names) -> list[Binding]:
    if type(expr) is cst.Name:
        return names.reaching(expr)
    if type(expr) is cst.Attribute:  # `self.x` (whatever the method's receiver is named)
        return names.self_attribute_bindings(expr)
    return []


def _bound_to_one(binding: Binding, names: Names, optimizers: OptimizerTracker,
                  summaries: Optional[_Summaries], depth: int) -> bool:
    if binding.kind == "param":
        return _parameter_holds_one(binding, names, optimizers, summaries, depth)
    value = binding.bound_value
    if value is None:
        return False
    if type(value) is cst.Call:
        return _builds(value, names, optimizers, summaries, binding.scope)
    return type(value) in (cst.Name, cst.Attribute) and _holds(value, names, optimizers, summaries, depth + 1)


def _parameter_holds_one(binding: Binding, names: Names, optimizers: OptimizerTracker,
                         summaries: Optional[_Summaries], depth: int) -> bool:
    annotation = binding.node.annotation if type(binding.node) is cst.Param else None
    if annotation is not None and _is_torch_scheduler(annotation.annotation, names):
        return True
    passed = summaries.passed_for(binding) if summaries is not None else None
    return bool(passed) and any(_holds(value, names, optimizers, summaries, depth + 1) for value in passed or ())


def _builds(call: cst.Call, names: Names, optimizers: OptimizerTracker, summaries: Optional[_Summaries],
            scope: Optional[NameScope] = None) -> bool:
    """The call constructs a scheduler, or runs a function whose summary returns one."""
    qualified = names.qualify(call.func) or dotted_name(call.func) or ""
    if qualified.startswith(_TORCH_SCHEDULERS) or _FACTORY.match(qualified):
        return True
    returned = summaries.returned_facts(call) if summaries is not None else None
    if returned is not None and len(returned) == 1:
        return getattr(returned[0], "role", None) == LR_SCHEDULER
    handed = [arg.value for arg in call.args if (arg.keyword is None and not arg.star) or (
        arg.keyword is not None and arg.keyword.value == "optimizer")][:1]
    if not handed:
        return False
    where = scope or (names.scope_of(handed[0]) if type(handed[0]) is cst.Name else None)
    return where is not None and optimizers.resolve(handed[0], _optimizer_scope(where, names)) is not None


def _is_torch_scheduler(annotation: cst.BaseExpression, names: Names) -> bool:
    if type(annotation) is cst.SimpleString:  # `"torch.optim.lr_scheduler.LRScheduler"`
        return annotation.evaluated_value.startswith(_TORCH_SCHEDULERS)
    if type(annotation) is cst.Subscript:  # `Optional[LRScheduler]`
        return any(type(element.slice) is cst.Index and _is_torch_scheduler(element.slice.value, names)
                   for element in annotation.slice)
    if type(annotation) is cst.BinaryOperation:  # `LRScheduler | None`
        return _is_torch_scheduler(annotation.left, names) or _is_torch_scheduler(annotation.right, names)
    return (names.qualify(annotation) or dotted_name(annotation) or "").startswith(_TORCH_SCHEDULERS)


def _optimizer_scope(scope: NameScope, names: Names) -> Scope:
    """A scope of the `names` part as the `optimizers` part takes it."""
    node = scope.node
    functions = (node,) if type(node) is cst.FunctionDef else ()
    return Scope(functions, names.enclosing_class(scope))  # type: ignore[arg-type]
