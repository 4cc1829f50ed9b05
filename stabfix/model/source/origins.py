"""Which object a name holds, by the calls that created it: `buffer` in `torch.load(buffer)` after
`buffer = io.BytesIO()`, also inside a function of the file that the file's calls hand the object
(`def write(model, buffer): torch.save(model.state_dict(), buffer)` called as `write(model, buffer)`).

Two names whose objects come from the same creation calls hold what one statement made: a buffer one
function fills and another reads back (an in-process round trip), whichever function of the file each
sits in. The answer is None when a binding is anything but a call (a parameter no call of the file binds,
a literal, an unpacked element).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names
from stabfix.model.source.instances import is_static

MAX_DEPTH = 4  # functions followed up through their callers


def created_by(names: Names, calls: list[cst.Call], expr: cst.BaseExpression,
               depth: int = 0) -> Optional[frozenset[int]]:
    """The ids of the calls whose result `expr` (a name) may hold, or None when a binding shows no such call."""
    if type(expr) is not cst.Name or depth > MAX_DEPTH:
        return None
    bindings = names.reaching(expr)
    if not bindings:
        return None
    found: set[int] = set()
    for binding in bindings:
        if binding.kind in ("assign", "with") and type(binding.value) is cst.Call and not binding.position:
            found.add(id(binding.value))
            continue
        function = binding.scope.node
        if binding.kind != "param" or type(function) is not cst.FunctionDef:
            return None
        passed = [passed_argument(function, call, binding.name) for call in names.calls_running(function, calls)]
        if not passed or any(argument is None for argument in passed):
            return None
        for argument in passed:
            inner = created_by(names, calls, argument, depth + 1)  # type: ignore[arg-type]
            if inner is None:
                return None
            found |= inner
    return frozenset(found)


def passed_argument(function: cst.FunctionDef, call: cst.Call, parameter: str) -> Optional[cst.BaseExpression]:
    """What `call` passes for `parameter` of `function` (a method called on its instance or class: the
    receiver is not among the arguments); None when not shown (a default, `*args`)."""
    params = [*function.params.posonly_params, *function.params.params]
    if type(call.func) is cst.Attribute and params and not is_static(function):
        params = params[1:]
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == parameter:
                return arg.value
        elif position < len(params) and params[position].name.value == parameter:
            return arg.value
    return None


def instance_class(names: Names, calls: list[cst.Call], name: cst.Name, depth: int = 0) -> Optional[cst.ClassDef]:
    """The class whose instance `name` holds: a method's own receiver (`self`, `this`), or a parameter of a
    function of the file that every call of the file hands such a receiver (`def init_mask(module, n):
    module.register_buffer(...)` called as `init_mask(self, n)` in a method)."""
    owner = names.receiver_class(name) if name in names.uses else None
    if owner is not None or depth > MAX_DEPTH:
        return owner
    bindings = names.reaching(name) if name in names.uses else []
    if len(bindings) != 1 or bindings[0].kind != "param" or type(bindings[0].scope.node) is not cst.FunctionDef:
        return None
    function = bindings[0].scope.node
    passed = [passed_argument(function, call, name.value) for call in names.calls_running(function, calls)]
    owners = {instance_class(names, calls, argument, depth + 1) if type(argument) is cst.Name else None
              for argument in passed}
    return owners.pop() if len(owners) == 1 else None
