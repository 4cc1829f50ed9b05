"""Which method of a class of this file a call on an instance of it runs: `Steps().run(x)`, or
`steps.run(x)` where the one binding of `steps` that reaches the call is `Steps(...)`.

`names.definition_of` answers for a function and for `self.method(...)` inside the class; this answers
for an instance the code builds itself, wherever the call is."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names


def method_of_instance(names: Names, call: cst.Call) -> Optional[cst.FunctionDef]:
    """The `def` a call on an instance of a class of this file runs (the last one of its name in the class
    body, as Python keeps), or None: not an instance built here, or no such method."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    receiver: Optional[cst.BaseExpression] = func.value
    if isinstance(receiver, cst.Name):
        receiver = names.single_value(receiver) if receiver in names.uses else None
    if not isinstance(receiver, cst.Call) or not isinstance(receiver.func, cst.Name):
        return None
    built = names.instance_of(receiver)
    if built is None:
        return None
    owner = built.module_class if built.kind == "function" else built.node if built.kind == "class" else None
    if not isinstance(owner, cst.ClassDef) or not isinstance(owner.body, cst.IndentedBlock):
        return None
    methods = [item for item in owner.body.body if isinstance(item, cst.FunctionDef) and item.name.value == func.attr.value]
    return methods[-1] if methods else None


def is_static(function: cst.FunctionDef) -> bool:
    """Decorated with `staticmethod`: called on an instance, it gets no receiver."""
    for decorator in function.decorators:
        expr = decorator.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
        if name == "staticmethod":
            return True
    return False
