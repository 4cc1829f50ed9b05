"""Collective communication: which calls every process of a distributed job must make together.

`collective_api(call, names)` is the collective a call runs, spelled for a message (`dist.all_reduce`,
`accelerator.wait_for_everyone`), or None:

- `torch.distributed`'s collectives however imported (`import torch.distributed as dist`,
  `from torch.distributed import barrier`), accelerate's and DeepSpeed's module-level ones;
- the methods of a framework object that synchronise the processes: an `Accelerator`'s
  `wait_for_everyone`/`gather`/`gather_for_metrics`/`reduce`/`pad_across_processes`, a Fabric's or a
  Lightning strategy's `barrier`/`all_reduce`/`all_gather`/`broadcast`. The receiver is known when a
  binding shows it built (`accelerator = Accelerator()`, `self.fabric = Fabric(...)`) or it is a
  `.strategy`; `wait_for_everyone()` and an argument-free `barrier()` are synchronisations on any
  receiver. A receiver the file never builds (a parameter `accelerator`) counts when the file imports
  the framework and the call has the framework's shape (one tensor, no `dim`): a tensor's own
  `t.gather(1, index)` never does.

Point-to-point calls (`send`/`recv`) and group construction are not collectives here.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names

_TORCH_NAMES = (
    "all_reduce", "barrier", "monitored_barrier", "all_gather", "all_gather_object", "all_gather_into_tensor",
    "broadcast", "broadcast_object_list", "reduce", "gather", "gather_object", "scatter", "scatter_object_list",
    "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
)
MODULE_COLLECTIVES: dict[str, str] = {
    **{f"torch.distributed.{name}": f"dist.{name}" for name in _TORCH_NAMES},
    **{f"torch.distributed.distributed_c10d.{name}": f"dist.{name}" for name in _TORCH_NAMES},
    **{f"deepspeed.comm.{name}": f"deepspeed.comm.{name}" for name in _TORCH_NAMES},
    **{f"accelerate.utils.{name}": f"accelerate.utils.{name}" for name in (
        "gather", "gather_object", "reduce", "broadcast", "broadcast_object_list", "pad_across_processes",
        "wait_for_everyone")},
}
FRAMEWORK_CLASSES = frozenset({
    "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric",
})
FRAMEWORK_METHODS = frozenset({"wait_for_everyone", "gather", "gather_for_metrics", "reduce", "pad_across_processes",
                               "barrier", "all_reduce", "all_gather", "broadcast"})
_ALWAYS_SYNC = frozenset({"wait_for_everyone"})
_FRAMEWORK_MODULES = ("accelerate", "lightning", "lightning_fabric", "pytorch_lightning")


def collective_api(call: cst.Call, names: Names) -> Optional[str]:
    qualified = names.qualify(call.func) or ""
    if qualified in MODULE_COLLECTIVES:
        return MODULE_COLLECTIVES[qualified]
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in FRAMEWORK_METHODS:
        return None
    method, receiver = func.attr.value, func.value
    if qualified.startswith(("torch.", "numpy.", "functools.")):
        return None  # torch.gather, functools.reduce: a module's function, not a method
    spelled = _spelled(receiver)
    if method in _ALWAYS_SYNC or method == "barrier" and not call.args:
        return f"{spelled}.{method}"
    if _built_framework(receiver, names) or type(receiver) is cst.Attribute and receiver.attr.value == "strategy":
        return f"{spelled}.{method}"
    if _imports_framework(names) and _framework_shape(call) and not _built_otherwise(receiver, names):
        return f"{spelled}.{method}"
    return None


def _spelled(receiver: cst.BaseExpression) -> str:
    parts: list[str] = []
    while type(receiver) is cst.Attribute:
        parts.append(receiver.attr.value)
        receiver = receiver.value
    if type(receiver) is cst.Name:
        parts.append(receiver.value)
    return ".".join(reversed(parts)) or "<object>"


def _bound_values(receiver: cst.BaseExpression, names: Names) -> list[cst.BaseExpression]:
    bindings = []
    if type(receiver) is cst.Name and receiver in names.uses:
        bindings = names.bindings_of(receiver)
    elif type(receiver) is cst.Attribute:  # `self.accelerator`, whatever the method's receiver is named
        bindings = names.self_attribute_bindings(receiver)
    return [b.bound_value for b in bindings if b.bound_value is not None]


def _built_framework(receiver: cst.BaseExpression, names: Names) -> bool:
    return any(type(v) is cst.Call and names.qualify(v.func) in FRAMEWORK_CLASSES for v in _bound_values(receiver, names))


def _built_otherwise(receiver: cst.BaseExpression, names: Names) -> bool:
    """The receiver is shown to hold something else (a tensor, a module): its `.gather` is not a collective."""
    values = _bound_values(receiver, names)
    return bool(values) and not any(type(v) is cst.Call and names.qualify(v.func) in FRAMEWORK_CLASSES for v in values)


def _imports_framework(names: Names) -> bool:
    return any((b.qualified or "").startswith(_FRAMEWORK_MODULES) for b in names.all_bindings() if b.kind == "import")


def _framework_shape(call: cst.Call) -> bool:
    """`accelerator.gather(t)`: one positional value, no `dim`/`index` (a tensor's `gather(dim, index)`)."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    return len(positional) == 1 and type(positional[0].value) is not cst.Integer and not keywords & {"dim", "index"}
