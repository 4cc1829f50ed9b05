"""SF505 wrapped-module-state-dict-saved: a DDP/DataParallel wrapper's state dict saved, keys prefixed `module.`.

A query over the model's `distributed` part (`Distributed.wrapped`: which expressions hold a module that
DistributedDataParallel or DataParallel wraps, or that accelerate's `accelerator.prepare` handed back,
through names, `self.<attr>` and same-file helpers). A finding is `X.state_dict()` of such an `X`
reaching `torch.save(...)` or `accelerator.save(...)`:
as the saved object, as a value of a dict, list or tuple literal saved (`{"model": X.state_dict(), ...}`),
or through a name bound to either. Left alone: `X.module.state_dict()`, the inner module under another
name, `accelerator.unwrap_model(X).state_dict()`, FSDP (its state dict carries the inner names), and a
file that itself reads such checkpoints knowingly: it loads one into a wrapped module (`ddp_model.
load_state_dict(...)`) or strips the prefix (`k.replace("module.", "")`, `removeprefix("module.")`,
`consume_prefix_in_state_dict_if_present`).

Fix (unsafe): `X.module.state_dict()` where every binding reaching `X` is a wrap, and
`getattr(X, "module", X).state_dict()` where only some are (`if distributed: model = DDP(model)`). The
tensors saved are the same; the keys lose the `module.` prefix, which is the point, but a reader
elsewhere that loads the file into a wrapped module must now load into `X.module`.
"""

from __future__ import annotations

from typing import Iterator, Optional

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.domain.data_loaders import argument
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import children
from stabfix.shape import Shape

SAVES = frozenset({"torch.save", "torch.serialization.save"})
PREFIX_STRIPPERS = frozenset({"torch.nn.modules.utils.consume_prefix_in_state_dict_if_present"})


class WrappedModuleStateDictSaved(Checker):
    code = "SF505"
    tokens = ("state_dict",)
    also_needs = (("DataParallel", "DDP", "prepare("),)
    needs = ("distributed",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on an `X.state_dict()` (no arguments) that a save call (`torch.save`, however imported; `<obj>.save`) is given
        return any(type(c.func) is ast.Attribute and not c.args and not c.keywords for c in shape.calls("state_dict")) \
            and any(call.args or call.keywords for call in shape.calls(*shape.spellings("save")))

    def leave_Module(self, original_node: cst.Module) -> None:
        distributed = self.model.distributed
        if self._reads_prefixed_checkpoints():
            return
        for call in distributed.flows.calls():
            if not self._is_save(call):
                continue
            saved = argument(call, 0, "obj")
            for state_call, how in self._state_dicts(saved, 0) if saved is not None else ():
                receiver = state_call.func.value  # type: ignore[attr-defined]
                wrapped = distributed.wrapped(receiver)
                if wrapped is not None:
                    self.report(state_call, self._message(receiver, wrapped, how), self._fix(state_call, receiver, wrapped))

    def _is_save(self, call: cst.Call) -> bool:
        func = call.func  # `torch.save`, or accelerate's `accelerator.save` (it writes what it is handed as is)
        if type(func) is cst.Attribute and func.attr.value == "save" and self.model.distributed.framework_object(func.value):
            return True
        return self.model.names.qualify(func) in SAVES

    def _state_dicts(self, expr: cst.BaseExpression, depth: int) -> Iterator[tuple[cst.Call, str]]:
        """The `X.state_dict()` calls whose result `expr` saves, each with how it gets there."""
        if depth > 3:
            return
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "state_dict" \
                and not expr.args:
            yield expr, ""
        elif type(expr) is cst.Dict:
            for element in expr.elements:
                if type(element) is cst.DictElement:
                    for found, _ in self._state_dicts(element.value, depth + 1):
                        yield found, " (an entry of the saved dict)"
        elif type(expr) in (cst.Tuple, cst.List):
            for element in expr.elements:
                yield from self._state_dicts(element.value, depth + 1)
        elif type(expr) is cst.Name and expr in self.model.names.uses:
            for binding in self.model.names.reaching(expr):
                if binding.bound_value is not None:
                    for found, how in self._state_dicts(binding.bound_value, depth + 1):
                        yield found, how or f" (through `{expr.value}`)"

    def _reads_prefixed_checkpoints(self) -> bool:
        """The file loads into a wrapped module or strips the `module.` prefix: it knows the format it saves."""
        distributed = self.model.distributed
        for call in distributed.flows.calls():
            func = call.func
            if self.model.names.qualify(func) in PREFIX_STRIPPERS:
                return True
            if type(func) is cst.Attribute and func.attr.value == "load_state_dict" and distributed.wrapped(func.value):
                return True
            if type(func) is cst.Attribute and func.attr.value in ("replace", "removeprefix", "lstrip", "startswith") \
                    and call.args and _mentions_prefix(call.args[0].value):
                return True
        return False

    def _message(self, receiver: cst.BaseExpression, wrapped: str, how: str) -> str:
        spelled = code_of(receiver, 40)
        if wrapped == "prepared":
            return (f"`{spelled}` is what `accelerator.prepare` handed back, a DistributedDataParallel wrapper whenever "
                    f"the run has several processes: `{spelled}.state_dict()`{how} then saves every key prefixed "
                    f"`module.`, so loading it into the plain model fails (or with `strict=False` loads nothing); "
                    f"save `accelerator.unwrap_model({spelled}).state_dict()`")
        when = "is" if wrapped == "always" else "may be (when the wrap runs)"
        return (f"`{spelled}` {when} a DistributedDataParallel/DataParallel wrapper: `{spelled}.state_dict()`{how} "
                f"saves every key prefixed `module.`, so loading it into the plain model fails (or with "
                f"`strict=False` loads nothing); save `{spelled}.module.state_dict()`")

    def _fix(self, state_call: cst.Call, receiver: cst.BaseExpression, wrapped: str) -> Optional[Fix]:
        func = state_call.func
        assert type(func) is cst.Attribute
        if wrapped == "always":
            inner: cst.BaseExpression = cst.Attribute(value=receiver, attr=cst.Name("module"))
            description = f"save `{code_of(receiver, 40)}.module.state_dict()`"
        else:
            inner = cst.parse_expression(f'getattr({code_of(receiver, 200)}, "module", {code_of(receiver, 200)})')
            description = f'save `getattr({code_of(receiver, 40)}, "module", ...).state_dict()`'
        return Fix("unsafe", description + " (unsafe: a reader that loads the file into a wrapped module must "
                   "now load into its `.module`)", {state_call: state_call.with_changes(func=func.with_changes(value=inner))})


def _mentions_prefix(expr: cst.CSTNode) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.SimpleString and node.evaluated_value in ("module.", "module"):
            return True
        stack.extend(children(node))
    return False
