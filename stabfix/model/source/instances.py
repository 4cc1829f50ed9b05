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
    return names.method_on_instance(call)


def is_static(function: cst.FunctionDef) -> bool:
    """Decorated with `staticmethod`: called on an instance, it gets no receiver."""
    for decorator in function.decorators:
        expr = decorator.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
        if name == "staticmethod":
            return True
    return False
