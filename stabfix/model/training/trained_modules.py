"""Which modules the file trains: a question about a module's receiver (`model`, `self.net`), asked of the
`modes` part (train/eval switches), the `events` part (optimizer constructions) and `names` (autograd
regions of each use). No traversal of its own.

- `is_trained(receiver, modes, events)`: the file switches the module to train mode somewhere (`model.train()`,
  also through an owner or part of it: `self.model.train()` for `self.model.encoder`), or builds an optimizer
  from its parameters (`Adam(model.parameters())`, `SGD(model.head.parameters())` for `model.head`).
- `forwarded_with_grad(receiver, node, names)`: the code under `node` (a training loop) runs the module's forward
  with autograd on (`net(x)`, not a frozen teacher's forward under `no_grad`): the module is trained there,
  whoever built its optimizer.

Frozen teachers, EMA and target networks are neither: SF407 leaves their eval switches alone.
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import walk
from stabfix.model.calls.events import Events
from stabfix.model.training.modes import ModeSwitches, owns


def is_trained(receiver: str, modes: ModeSwitches, events: Events) -> bool:
    if any(not s.to_eval and (owns(s.receiver, receiver) or owns(receiver, s.receiver)) for s in modes.switches):
        return True
    for event in events.of_kind("optimizer"):
        if any(dotted_name(arg.value.func.value) == receiver for arg in event.node.args
               if type(arg.value) is cst.Call and type(arg.value.func) is cst.Attribute):
            return True
    return False


def forwarded_with_grad(receiver: str, node: cst.CSTNode, names: Names) -> bool:
    for inner in walk(node):
        if type(inner) is cst.Call and dotted_name(inner.func) == receiver:
            head = inner.func
            while type(head) is cst.Attribute:
                head = head.value
            use = names.uses.get(head) if type(head) is cst.Name else None
            if use is not None and not use.grad_off:
                return True
    return False
