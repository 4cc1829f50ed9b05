"""Where a tensor lives: which expressions name the CPU, which calls move a tensor to it or off it.

Static analysis cannot know the device of a tensor. These helpers answer the questions that can be
answered from the code: is this device expression the CPU (`"cpu"`, `torch.device("cpu")`, a
`host_device` variable)? does this call move its receiver to the CPU (`.cpu()`, `.to("cpu")`,
`.numpy()`) or to an accelerator (`.cuda()`, `.to(device)`)? and which expression in a function
names "the device the caller works on" (a `device` parameter, `self.device`, `x.device`)?

`DeviceKinds.kind(expr)` answers what a device expression names, following the code rather than its
spelling: a literal (`"cuda:1"`, `torch.device("cpu")`), a name or `self.<attr>` through every binding
that may hold, a call of a function or method of the file through every `return` (`self._resolved_device()`),
a `@property` of the class (`self.device`), both branches of `"cuda" if ok else "cpu"`. "host" or
"accelerator" when every path agrees; None when the code does not show it (a config field such as
`cfg.device`/`args.device`, an argument, a library call): a device expression all the same, which the
rules take for the device the program works on, and never proof of the host. Every rule and model part asks
`DeviceKinds` (not the name a device is held by) whether a move goes to the host or an accelerator:
`DeviceKinds.moves_to_accelerator(move)`: a `.cuda()` or a `.to(...)` whose device is not shown to be the host;
`moves_to_host(move)`: `.cpu()` or a `.to(d)` whose `d` holds the host; `move_target(call)`, `is_host(expr)`: the
same answers as `to_call_target`/`is_cpu_expression` given this (a device's or dtype's name only breaks a tie); `DeviceKinds.names_a_device(expr)`: the
expression names a device (`device=` can say it), not another tensor whose device and dtype `.to(other)` takes.
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.calls import torch_ops
from typing import Optional

from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.instances import held_class
from stabfix.model.source.syntax import preorder
from stabfix.model.source.node_fields import children

# Methods whose result is on the CPU, or is not a tensor at all (the torch-operation table's host results).
CPU_METHODS = frozenset(name for name, op in torch_ops.METHODS.items() if op.device == "host")
_TORCH_DTYPES = frozenset(
    {
        "float",
        "float16",
        "float32",
        "float64",
        "half",
        "double",
        "bfloat16",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "long",
        "uint8",
        "bool",
        "short",
        "complex64",
        "complex128",
    }
)


def method_chain(
    expr: cst.BaseExpression, qualify=None
) -> tuple[cst.BaseExpression, list[tuple[str, cst.BaseExpression]]]:
    """`x.float().clone().detach()` -> (`x`, [("float", call), ("clone", call), ("detach", call)]).

    Attribute reads appear as `.name` steps and subscripts as `[]` steps, innermost first. With
    `qualify`, a call of an imported function (`torch.cat(...)`) is a root, not a method call.
    """
    steps: list[tuple[str, cst.BaseExpression]] = []
    current = expr
    while True:
        if (
            type(current) is cst.Call
            and type(current.func) is cst.Attribute
            and (qualify is None or qualify(current.func) is None)
        ):
            steps.append((current.func.attr.value, current))
            current = current.func.value
        elif type(current) is cst.Subscript:
            steps.append(("[]", current))
            current = current.value
        elif type(current) is cst.Attribute and (qualify is None or qualify(current) is None):
            steps.append(("." + current.attr.value, current))
            current = current.value
        else:
            break
    steps.reverse()
    return current, steps


def is_host_name(name: str) -> bool:
    """A variable whose name says it holds host memory or a host-side device: `cpu_device`, `offload_to`."""
    lowered = name.lower()
    return any(word in lowered for word in vocab.HOST_WORDS)


def is_device_name(name: str) -> bool:
    """`device`, `self.device`, `model_device`, `DEVICE`: a name that by convention holds a torch device."""
    last = name.rsplit(".", 1)[-1].lower()
    return last == "device" or last.endswith("_device")


def is_cpu_expression(expr: cst.BaseExpression, qualify, devices: Optional["DeviceKinds"] = None) -> bool:
    """`"cpu"`, `"cpu:0"`, `torch.device("cpu")`, `cpu_device`: an expression naming host memory.

    With `devices`, a name or attribute is host memory when the values bound to it are (`d = "cpu"`,
    `self.dst = torch.device("cpu")`), and not when they name an accelerator, whatever it is called; its
    name (`cpu_device`, `offload_to`) only breaks the tie when the code does not show what it holds.
    """
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value.split(":")[0].strip().lower() == "cpu"  # type: ignore[union-attr]
    if type(expr) is cst.Call:
        name = qualify(expr.func) or ""
        if name in ("torch.device",) and expr.args:
            return is_cpu_expression(expr.args[0].value, qualify, devices)
        return devices is not None and devices.kind(expr) == "host"  # `self._store_device()`: through its returns
    dotted = dotted_name(expr)
    if dotted is None:
        return False
    kind = devices.kind(expr) if devices is not None else None
    if kind is not None:
        return kind == "host"
    return is_host_name(dotted.rsplit(".", 1)[-1])  # tie-break: the data flow leaves it open


def is_dtype_expression(expr: cst.BaseExpression, qualify, devices: Optional["DeviceKinds"] = None) -> bool:
    """`torch.float16`, `x.dtype`, `compute_dtype`: an expression naming a dtype. With `devices`, a name or
    attribute is one when every value bound to it is (`precision = torch.bfloat16`), whatever it is called."""
    name = qualify(expr) or dotted_name(expr) or ""
    if name.startswith("torch.") and name.rsplit(".", 1)[-1] in _TORCH_DTYPES:
        return True
    if devices is not None and devices.holds_a_dtype(expr):
        return True
    last = name.rsplit(".", 1)[-1].lower()
    return last == "dtype" or last.endswith("_dtype")  # tie-break: a parameter, a config field


def to_call_target(call: cst.Call, qualify, devices: Optional["DeviceKinds"] = None) -> tuple[str, cst.BaseExpression | None]:
    """What a `.to(...)` call moves to: ("cpu", expr), ("device", expr), or ("dtype", None) when it only casts.

    With `devices`, a device held by a name is the CPU by what is bound to it (`is_cpu_expression`)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return ("cpu" if is_cpu_expression(arg.value, qualify, devices) else "device", arg.value)
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if not positional:
        return ("dtype", None)
    first = positional[0].value
    if is_dtype_expression(first, qualify, devices):
        return ("dtype", None)
    if is_cpu_expression(first, qualify, devices):
        return ("cpu", first)
    return ("device", first)


def has_cpu_move(expr: cst.CSTNode, qualify) -> bool:
    """Whether any call inside `expr` moves a value to the CPU or turns it into a Python object."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        method = expr.func.attr.value
        if method in CPU_METHODS:
            return True
        if method == "to" and to_call_target(expr, qualify)[0] == "cpu":
            return True
    return any(has_cpu_move(child, qualify) for child in children(expr))


def is_grad_disabling_context(call: cst.BaseExpression, qualify) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)` (also as decorators)."""
    target = call.func if type(call) is cst.Call else call
    name = qualify(target) or ""
    if name in ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"):
        return True
    if name == "torch.set_grad_enabled" and type(call) is cst.Call and call.args:
        value = call.args[0].value
        return type(value) is cst.Name and value.value == "False"
    return False


_MAX_DEVICE_DEPTH = 5


class DeviceKinds:
    """What a device expression names: "host", "accelerator", or None when the code does not show it."""

    def __init__(self, names: Names) -> None:
        self.names = names

    def kind(self, expr: Optional[cst.BaseExpression], depth: int = 0) -> Optional[str]:
        if expr is None or depth > _MAX_DEVICE_DEPTH:
            return None
        if type(expr) is cst.SimpleString:
            text = expr.evaluated_value
            if not isinstance(text, str):
                return None
            device = text.split(":")[0].strip().lower()
            return "host" if device == "cpu" else "accelerator" if device in vocab.DEVICE_STRINGS else None
        if type(expr) is cst.Integer:
            return "accelerator"  # `.to(0)`, `.cuda(1)`: a device index
        if type(expr) is cst.IfExp:
            return _agree([self.kind(expr.body, depth + 1), self.kind(expr.orelse, depth + 1)])
        if type(expr) is cst.Call:
            return self._of_call(expr, depth)
        if type(expr) is cst.Name:
            return self._of_bindings(self.names.reaching(expr), depth)
        if type(expr) is cst.Attribute:
            return self._of_attribute(expr, depth)
        return None

    def is_host(self, expr: cst.BaseExpression) -> bool:
        """The device expression names host memory, by what the code binds to it (`is_cpu_expression` with this)."""
        return is_cpu_expression(expr, self.names.qualify, self)

    def move_target(self, call: cst.Call) -> tuple[str, Optional[cst.BaseExpression]]:
        """What a `.to(...)` call moves to (`to_call_target`), a device held by a name judged by what is bound to it."""
        return to_call_target(call, self.names.qualify, self)

    def moves_to_host(self, move: cst.Call) -> bool:
        """`x.cpu()`, `x.to(d)` with `d` shown to be the host (`d = torch.device("cpu")`, whatever it is called)."""
        if type(move.func) is not cst.Attribute:
            return False
        method = move.func.attr.value
        return method == "cpu" or (method == "to" and self.move_target(move)[0] == "cpu")

    def moves_to_accelerator(self, move: cst.Call) -> bool:
        """`x.cuda()`, `x.to(device)`: a `.cuda()`/`.to()` call that may place its receiver on an accelerator
        (a device bound to `torch.device("cuda")` is one even when it is called `host_device`)."""
        if move.func.attr.value == "cuda":  # type: ignore[attr-defined]
            return True
        target, device = self.move_target(move)
        return target == "device" and self.kind(device) != "host"

    def names_a_device(self, device: cst.BaseExpression) -> bool:
        """A literal, `torch.device(...)`, `x.device`, an expression whose device kind the code shows, or (a
        tie the data flow leaves open) a name spelled like a device."""
        if type(device) in (cst.SimpleString, cst.Integer) or (type(device) is cst.Attribute and device.attr.value == "device"):
            return True
        if type(device) is cst.Call:
            return self.names.qualify(device.func) == "torch.device"
        if self.kind(device) is not None:
            return True
        dotted = dotted_name(device)
        return dotted is not None and is_device_name(dotted)

    def holds_a_dtype(self, expr: cst.BaseExpression) -> bool:
        """A name, or an attribute of an instance of a class of this file, every binding of which is a torch dtype."""
        if type(expr) is cst.Name:
            bindings = self.names.reaching(expr)
        elif type(expr) is cst.Attribute and (owner := held_class(self.names, expr.value)) is not None:
            bindings = self.names.attribute_reaching(owner, expr.attr.value, expr.value)  # type: ignore[arg-type]
        else:
            return False
        return bool(bindings) and all(b.bound_value is not None and _is_torch_dtype(b.bound_value, self.names.qualify)
                                      for b in bindings)

    def holds_a_device(self, expr: Optional[cst.BaseExpression], depth: int = 0) -> bool:
        """The expression holds a torch device by its value, whatever it is called: a device literal or index,
        `torch.device(...)`, another tensor's or module's `.device` (of an instance of a class of this file: what
        its bindings or property hold), a name or attribute every binding of which holds one, a call of the
        file every `return` of which does, both branches of a conditional. Host memory included: ask `kind`."""
        if expr is None or depth > _MAX_DEVICE_DEPTH:
            return False
        if self.kind(expr, depth) is not None:
            return True
        if type(expr) is cst.IfExp:
            return self.holds_a_device(expr.body, depth + 1) and self.holds_a_device(expr.orelse, depth + 1)
        if type(expr) is cst.Call:
            if self.names.qualify(expr.func) == "torch.device":
                return True
            function = self.names.definition_of(expr)
            returns = self.names.returns.get(function, []) if function is not None else []
            return bool(returns) and all(self.holds_a_device(value, depth + 1) for value in returns)
        if type(expr) is cst.Name:
            return self._bindings_hold_a_device(self.names.reaching(expr), depth)
        if type(expr) is cst.Attribute:
            owner = held_class(self.names, expr.value)
            if owner is None:
                return expr.attr.value == "device"  # `x.device`: the torch attribute of a tensor or module
            bindings = self.names.attribute_reaching(owner, expr.attr.value, expr.value)  # type: ignore[arg-type]
            if bindings:
                return self._bindings_hold_a_device(bindings, depth)
            prop = _property(owner, expr.attr.value)
            returns = self.names.returns.get(prop, []) if prop is not None else []
            return bool(returns) and all(self.holds_a_device(value, depth + 1) for value in returns)
        return False

    def binds_a_device(self, bindings: list[Binding]) -> bool:
        """Every one of `bindings` (of a name or an attribute) binds a device, and none host memory."""
        if not self._bindings_hold_a_device(bindings, 0):
            return False
        return self._of_bindings(bindings, 0) != "host"

    def used_as_device(self, scope: cst.CSTNode, spelling: str) -> bool:
        """Code in `scope` moves a tensor to what `spelling` (`device`, `self.dev`) holds, and never to host
        memory through it: `t.to(d)`, `t.to(device=d)`, `t.cuda(d)`, a factory's `device=d`."""
        used = False
        for node in preorder(scope):
            if type(node) is not cst.Call:
                continue
            for value in _device_arguments(node, self):
                if dotted_name(value) == spelling:
                    if self.kind(value) == "host":
                        return False
                    used = True
        return used

    def _bindings_hold_a_device(self, bindings: list[Binding], depth: int) -> bool:
        """Every binding holds a device: its value does, or it is a parameter its function moves tensors to."""
        return bool(bindings) and all(
            self.holds_a_device(b.bound_value, depth + 1) if b.bound_value is not None
            else b.kind == "param" and self.used_as_device(b.scope.node, b.name)
            for b in bindings
        )

    def _of_call(self, call: cst.Call, depth: int) -> Optional[str]:
        qualified = self.names.qualify(call.func) or ""
        if qualified == "torch.device":
            return self.kind(call.args[0].value, depth + 1) if call.args else None
        function = self.names.definition_of(call)
        returns = self.names.returns.get(function, []) if function is not None else []
        return _agree([self.kind(value, depth + 1) for value in returns]) if returns else None

    def _of_attribute(self, expr: cst.Attribute, depth: int) -> Optional[str]:
        """`self.device`, `runner.device`: what every binding of the attribute on the receiver's class (a method's
        own instance whatever it is called, or an instance built in this file) holds, or what its property returns."""
        receiver = expr.value
        owner = held_class(self.names, receiver)
        if owner is None:
            return None
        bindings = self.names.attribute_reaching(owner, expr.attr.value, receiver)  # type: ignore[arg-type]
        if bindings:
            return self._of_bindings(bindings, depth)
        prop = _property(owner, expr.attr.value)
        returns = self.names.returns.get(prop, []) if prop is not None else []
        return _agree([self.kind(value, depth + 1) for value in returns]) if returns else None

    def _of_bindings(self, bindings: list[Binding], depth: int) -> Optional[str]:
        if not bindings or any(b.bound_value is None for b in bindings):
            return None  # a parameter, a loop variable, an unpacked result: not shown
        return _agree([self.kind(b.bound_value, depth + 1) for b in bindings])


def _device_arguments(call: cst.Call, devices: DeviceKinds) -> list[cst.BaseExpression]:
    """The device arguments of a call: `device=` of any call, the target of `.to(...)`, the index of `.cuda(...)`."""
    found = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "device"]
    if type(call.func) is cst.Attribute and not found:
        method = call.func.attr.value
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if method == "cuda" and positional:
            found.append(positional[0])
        elif method == "to" and positional and devices.move_target(call)[0] != "dtype":
            found.append(positional[0])
    return found


def _is_torch_dtype(expr: cst.BaseExpression, qualify) -> bool:
    """`torch.float16`, `torch.bfloat16 if ok else torch.float16`."""
    if type(expr) is cst.IfExp:
        return _is_torch_dtype(expr.body, qualify) and _is_torch_dtype(expr.orelse, qualify)
    name = qualify(expr) or ""
    return name.startswith("torch.") and name.rsplit(".", 1)[-1] in _TORCH_DTYPES


def _agree(kinds: list[Optional[str]]) -> Optional[str]:
    return kinds[0] if kinds and kinds[0] is not None and all(k == kinds[0] for k in kinds) else None


def _property(owner: cst.ClassDef, attribute: str) -> Optional[cst.FunctionDef]:
    for item in owner.body.body:
        if type(item) is cst.FunctionDef and item.name.value == attribute:
            if any(dotted_name(d.decorator) in ("property", "functools.cached_property", "cached_property") for d in item.decorators):
                return item
    return None
