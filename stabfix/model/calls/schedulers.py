"""Learning-rate schedulers: which stepped objects move an optimizer's learning rate.

`is_lr_scheduler(expr, names, optimizers)` answers for the receiver of a `.step()`:
- bound (a name, or `self.<attr>` in any method) to a `torch.optim.lr_scheduler` class, a
  transformers/diffusers schedule factory (`get_linear_schedule_with_warmup`, `get_scheduler`), or any
  other call handed an optimizer (its first argument or `optimizer=`: `WarmupCosine(opt, ...)`,
  timm's `CosineLRScheduler(optimizer, ...)`) — the optimizer is what ties it to training;
- or, seen only as a function parameter, named like a scheduler (`scheduler`, `lr_scheduler`,
  `sched`): the caller's choice is not visible, so the name settles what the object is.
A sampler's `noise_scheduler.step(out, t, x)` (diffusion) is built without an optimizer and is not one.
"""

from __future__ import annotations

import re

import libcst as cst

from stabfix.model.calls.optimizers import OptimizerTracker, Scope
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names

_FACTORY = re.compile(r"^(transformers|diffusers)(\..+)?\.get_\w*schedule\w*$|^timm\.scheduler\.\w+$")
_SCHEDULER_WORD = re.compile(r"(^|_)(lr_)?sched(uler)?\d*$|(^|_)lr_scheduler\d*$")
_MAX_DEPTH = 4


def is_lr_scheduler(expr: cst.BaseExpression, names: Names, optimizers: OptimizerTracker) -> bool:
    bindings = _bindings(expr, names)
    if not bindings:
        return False
    return any(_schedules(binding, names, optimizers, 0) for binding in bindings)


def _bindings(expr: cst.BaseExpression, names: Names) -> list[Binding]:
    if isinstance(expr, cst.Name):
        return names.reaching(expr)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        use_scope = names.scope_of(expr.value)
        owner = names.enclosing_class(use_scope) if use_scope is not None else None
        return names.attribute_bindings(owner, expr.attr.value) if owner is not None else []
    return []


def _schedules(binding: Binding, names: Names, optimizers: OptimizerTracker, depth: int) -> bool:
    if binding.kind == "param":
        return bool(_SCHEDULER_WORD.search(binding.name.lower()))
    value = binding.bound_value
    if depth > _MAX_DEPTH or value is None:
        return False
    if isinstance(value, (cst.Name, cst.Attribute)) and not isinstance(value, cst.Call):
        return any(_schedules(b, names, optimizers, depth + 1) for b in _bindings(value, names))
    if not isinstance(value, cst.Call):
        return False
    qualified = names.qualify(value.func) or dotted_name(value.func) or ""
    if qualified.startswith("torch.optim.lr_scheduler.") or _FACTORY.match(qualified):
        return True
    handed = [arg.value for arg in value.args if (arg.keyword is None and not arg.star) or (
        arg.keyword is not None and arg.keyword.value == "optimizer")][:1]
    return bool(handed) and optimizers.resolve(handed[0], _scope_of(binding, names)) is not None


def _scope_of(binding: Binding, names: Names) -> Scope:
    """Where a binding's value is read, as the `optimizers` part takes it."""
    node = binding.scope.node
    functions = (node,) if isinstance(node, cst.FunctionDef) else ()
    return Scope(functions, names.enclosing_class(binding.scope))  # type: ignore[arg-type]
