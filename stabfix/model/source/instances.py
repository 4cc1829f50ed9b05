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
        name = expr.attr.value if type(expr) is cst.Attribute else expr.value if type(expr) is cst.Name else ""
        if name == "staticmethod":
            return True
    return False


def held_class(names: Names, receiver: cst.BaseExpression) -> Optional[cst.ClassDef]:
    """The class of this file whose instance `receiver` (a name) holds: a method's own receiver whatever it is
    called (`Names.receiver_class`), or a name whose one reaching binding builds an instance of it
    (`runner = Runner(cfg)`); None for anything else (a parameter, a library object, an attribute chain)."""
    if type(receiver) is not cst.Name or receiver not in names.uses:
        return None
    owner = names.receiver_class(receiver)
    if owner is not None:
        return owner
    value = names.single_value(receiver)
    built = names.instance_of(value) if type(value) is cst.Call and type(value.func) is cst.Name else None
    if built is None:
        return None
    owner = built.module_class if built.kind == "function" else built.node if built.kind == "class" else None
    return owner if type(owner) is cst.ClassDef else None


def attribute_values(names: Names, read: cst.Attribute) -> list[Optional[cst.BaseExpression]]:
    """The values the file stores in the attribute a read names that may be what it reads: for a receiver of a
    class of this file (`self.flag` in a method, whatever the instance is called, `runner.flag`) the stores on
    instances of that class, never another class's `self.flag`; for a receiver whose class the file does not show
    (`args.flag`, a parameter, `self.cfg.flag`) every store, since it may be an instance of any of them. None where
    unpacking or `+=` hides the value."""
    owner = held_class(names, read.value)
    stores = names.attribute_stores.get(read.attr.value, [])
    if owner is None:
        return list(stores)
    targets = names.attribute_store_targets.get(read.attr.value, [])
    return [value for value, target in zip(stores, targets) if held_class(names, target.value) is owner]


def instance_class_name(names: Names, expr: cst.BaseExpression, depth: int = 0, skip_none: bool = False) -> Optional[str]:
    """The class, as this file names it, whose instance `expr` holds: `Class(...)`, a parameter annotated with it, a
    name or `self.<attr>` every binding of which holds one of it (`skip_none`: a binding to `None` is left aside);
    None when any binding is unknown."""
    if depth > 4:
        return None
    if type(expr) is cst.Call:
        return names.qualify(expr.func)
    if type(expr) is cst.Attribute:
        bindings = names.self_attribute_bindings(expr)
    elif type(expr) is cst.Name and expr in names.uses:
        bindings = names.bindings_of(expr)
    else:
        return None
    classes: set[Optional[str]] = set()
    for binding in bindings:
        annotation = getattr(binding.node, "annotation", None) if binding.kind == "param" else None
        value = binding.bound_value
        if annotation is not None:
            classes.add(names.qualify(annotation.annotation))
        elif skip_none and type(value) is cst.Name and value.value == "None":
            continue
        else:
            classes.add(instance_class_name(names, value, depth + 1, skip_none) if value is not None else None)
    return classes.pop() if len(classes) == 1 else None
