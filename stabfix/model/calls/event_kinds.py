"""The kinds of training event the `events` part records (see `events` for what each one covers):
`Backward`, `Step`, `ClearGrad`, `GradWrite`, `Clip`, `Unscale`, `ParamUpdate`, `OptimizerBuilt`,
`LocalCall`, each with its node and its `Site`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import libcst as cst

from stabfix.model.calls.event_sites import Site


@dataclass(eq=False)
class Event:
    kind: ClassVar[str]
    node: cst.CSTNode  # the call, assignment or augmented assignment
    site: Site


@dataclass(eq=False)
class Backward(Event):
    kind: ClassVar[str] = "backward"
    loss: Optional[cst.BaseExpression]  # what is differentiated, when the call shows it


@dataclass(eq=False)
class Step(Event):
    kind: ClassVar[str] = "step"
    candidates: tuple[cst.BaseExpression, ...]  # `opt` for `opt.step()`; `opt` for `scaler.step(opt)`


@dataclass(eq=False)
class ClearGrad(Event):
    kind: ClassVar[str] = "clear"
    receiver: cst.BaseExpression  # `optimizer` of `optimizer.zero_grad()`, `p` of `p.grad = None`
    how: str  # zero_grad | set_none | zero_ (`p.grad.zero_()`) | foreach_zero_ (`torch._foreach_zero_(grads)`)
    #         | helper (`zero_grads(params)`: a function named for it, receiver = its first argument)
    #         | context (`with dist_autograd.context() as ctx:`, receiver = `ctx`)


@dataclass(eq=False)
class GradWrite(Event):
    kind: ClassVar[str] = "grad_write"
    tensor: cst.BaseExpression  # `p` of `p.grad = g`


@dataclass(eq=False)
class Clip(Event):
    kind: ClassVar[str] = "clip"
    parameters: Optional[cst.BaseExpression]  # what is clipped: the first argument, or `parameters=`


@dataclass(eq=False)
class Unscale(Event):
    kind: ClassVar[str] = "unscale"
    scaler: cst.BaseExpression
    optimizer: Optional[cst.BaseExpression]


@dataclass(eq=False)
class ParamUpdate(Event):
    kind: ClassVar[str] = "update"
    param: str  # the tensor changed in place as spelled (`p`, `model.head.weight`, `params[name]`; `.data` dropped)
    operation: str  # add_ | sub_ | copy_ | += | -= | data= | out=add | out=sub | foreach_add_ | foreach_sub_
    tensor: Optional[cst.BaseExpression] = None  # that expression (a list of tensors for foreach_*)


@dataclass(eq=False)
class OptimizerBuilt(Event):
    kind: ClassVar[str] = "optimizer"
    class_name: str


@dataclass(eq=False)
class LocalCall(Event):
    kind: ClassVar[str] = "call"
    name: str
    on_self: bool  # `self.name(...)` rather than `name(...)`
