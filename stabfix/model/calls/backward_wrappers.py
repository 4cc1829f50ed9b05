"""Training wrappers that run the backward pass themselves: `accelerator.backward(loss)`, `fabric.backward(loss)`,
`engine.backward(loss)` differentiate `loss` (scaling it, reducing gradients), where `t.backward(grad)` on a
tensor differentiates `t` with an incoming gradient.

`wraps_backward(names, receiver)` tells them apart by the receiver's class, resolved through imports and
the values bound to it (`acc = Accelerator(...)`, `net, opt, _, _ = deepspeed.initialize(...)`,
`self.acc = ...`); the receiver's name (`vocabulary.BACKWARD_WRAPPER_NAMES`) only breaks the tie when the
code does not show what it holds.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.scopes import Binding

# Objects whose `backward(loss)` differentiates `loss` (scaling it, reducing gradients) rather than themselves.
_BACKWARD_WRAPPER_CLASSES = frozenset({
    "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning.fabric.fabric.Fabric",
    "lightning_fabric.Fabric", "lightning_fabric.fabric.Fabric",
    "pytorch_lightning.lite.LightningLite", "lightning.pytorch.lite.LightningLite",
    "deepspeed.DeepSpeedEngine", "deepspeed.runtime.engine.DeepSpeedEngine",
    "colossalai.booster.Booster",
})
# Factories returning a tuple whose element at this index is such a wrapper.
_BACKWARD_WRAPPER_FACTORIES = {"deepspeed.initialize": 0}


def wraps_backward(names: Names, receiver: cst.BaseExpression) -> bool:
    """Whether `receiver.backward(loss)` is a training wrapper's backward of `loss` (accelerate's `Accelerator`,
    Lightning's `Fabric`, a DeepSpeed engine: they scale the loss and reduce gradients themselves). The
    receiver's class decides, through imports and the values bound to it (`acc = Accelerator(...)`,
    `net, opt, _, _ = deepspeed.initialize(...)`, `self.acc = ...`); its name (`BACKWARD_WRAPPER_NAMES`:
    `accelerator`, `engine`...) only breaks the tie when the code does not show it (a parameter, another
    file's helper)."""
    shown = _holds_backward_wrapper(names, receiver)
    if shown is not None:
        return shown
    owner = dotted_name(receiver)
    return owner is not None and owner.rsplit(".", 1)[-1].lower() in vocab.BACKWARD_WRAPPER_NAMES


def _holds_backward_wrapper(names: Names, receiver: cst.BaseExpression) -> Optional[bool]:
    """True when every value the receiver may hold is a training wrapper, False when none is, None when the
    code does not show it."""
    if type(receiver) is cst.Name:
        bindings = names.reaching(receiver)
    elif type(receiver) is cst.Attribute:
        bindings = names.self_attribute_bindings(receiver)
    else:
        return None
    verdicts = {_binds_backward_wrapper(names, binding) for binding in bindings}
    return verdicts.pop() if len(verdicts) == 1 else None


def _binds_backward_wrapper(names: Names, binding: Binding) -> Optional[bool]:
    if binding.kind == "unpack" and type(binding.value) is cst.Call:
        built = names.qualify(binding.value.func)  # `engine, opt, _, _ = deepspeed.initialize(...)`
        if built in _BACKWARD_WRAPPER_FACTORIES:
            return binding.position[:1] == (_BACKWARD_WRAPPER_FACTORIES[built],)
    value = binding.bound_value
    if type(value) is cst.Subscript and type(value.value) is cst.Call:
        built = names.qualify(value.value.func)  # `deepspeed.initialize(...)[0]`
        index = value.slice[0].slice if len(value.slice) == 1 else None
        if built in _BACKWARD_WRAPPER_FACTORIES and type(index) is cst.Index and type(index.value) is cst.Integer:
            return int(index.value.value) == _BACKWARD_WRAPPER_FACTORIES[built]
        return None
    if type(value) in (cst.BinaryOperation, cst.UnaryOperation):
        return False  # arithmetic makes a tensor, never a wrapper
    if type(value) is not cst.Call:
        return None
    built = names.qualify(value.func)
    if built is not None:
        if built in _BACKWARD_WRAPPER_CLASSES:
            return True
        return False if built.split(".", 1)[0] in ("torch", "torchvision") else None
    if type(value.func) is cst.Name:
        callee = names.reaching(value.func)
        if callee and all(b.kind == "param" for b in callee):
            return False  # `out = model(x)`: a module handed in, called: its output, not a wrapper
    return None
