"""Which method a call of an object runs: `net(x)` on an instance of a class runs its `__call__`, or, for a
module (whose `__call__` is nn.Module's), its `forward`.

The class is the one every binding reaching the called name shows: `net = Net()`, `self.net = Net()` stored
in the class, or a parameter every call of the file passes an instance of it for (`run_epoch(...,
LossCompute(...))`: `Callers.passed_for`). The class may be of this file (its `ClassDef`) or of another
file (its qualified name, whose summary the `foreign` hook holds). Unknown stays unknown: two classes, a
binding that is not a construction, a parameter no call binds, or a class that defines neither method in
its own body.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

import libcst as cst

from stabfix.model.source.names import Binding, Names

CALLED_METHODS = ("__call__", "forward")  # a class's own `__call__` runs first; else nn.Module's runs `forward`

HeldClass = Union[cst.ClassDef, str]


def called_instance_class(names: Names, passed_for: Callable[[Binding], Optional[list[cst.BaseExpression]]],
                          call: cst.Call) -> Optional[HeldClass]:
    """The one class (of this file: its def; else its qualified name) whose instance the call's callee holds."""
    func = call.func
    if type(func) is cst.Name:
        if func not in names.uses:
            return None
        values: list[Optional[cst.BaseExpression]] = []
        for binding in names.reaching(func):
            if binding.kind == "param":
                passed = passed_for(binding)
                if not passed:
                    return None
                values.extend(passed)
            elif binding.kind == "assign":
                values.append(binding.bound_value)
            else:
                return None
    elif type(func) is cst.Attribute and type(func.value) is cst.Name:  # `self.net(x)`: stores in the class
        values = [binding.bound_value if binding.kind == "assign" else None
                  for binding in names.self_attribute_bindings(func)]
    else:
        return None
    classes = {_constructed(names, value) for value in values}
    if len(classes) != 1:
        return None
    (held,) = classes
    return held


def own_called_method(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    """The `__call__` (else `forward`) a class defines in its own body (the last `def` of the name)."""
    if type(cls.body) is not cst.IndentedBlock:
        return None
    for name in CALLED_METHODS:
        defs = [item for item in cls.body.body if type(item) is cst.FunctionDef and item.name.value == name]
        if defs:
            return defs[-1]
    return None


def _constructed(names: Names, value: Optional[cst.BaseExpression]) -> Optional[HeldClass]:
    """The class a value constructs: a class of this file, or the qualified name of another; None otherwise."""
    if type(value) is not cst.Call:
        return None
    func = value.func  # type: ignore[union-attr]
    if type(func) is cst.Name:
        built = names.instance_of(value)  # type: ignore[arg-type]
        if built is None:
            return None
        owner = built.module_class if built.kind == "function" else built.node if built.kind == "class" else None
        if type(owner) is cst.ClassDef:
            return owner  # type: ignore[return-value]
        return built.qualified if built.kind == "library" else None
    return names.qualify(func) if type(func) is cst.Attribute else None


def built_holding_none(names: Names, construction: cst.BaseExpression, attribute: str) -> bool:
    """`construction` builds an instance of a class of this file whose `self.<attribute>` is only ever set, in
    `__init__`, to one of its parameters, and passes `None` for it (or leaves its `None` default): a method
    call on that attribute (`self.opt.step()`) cannot run on this instance (the code guards it)."""
    if type(construction) is not cst.Call or type(construction.func) is not cst.Name:  # type: ignore[union-attr]
        return False
    built = names.instance_of(construction)  # type: ignore[arg-type]
    owner = built.node if built is not None and built.kind == "class" else built.module_class if built is not None else None
    if type(owner) is not cst.ClassDef or type(owner.body) is not cst.IndentedBlock:  # type: ignore[union-attr]
        return False
    inits = [item for item in owner.body.body if type(item) is cst.FunctionDef and item.name.value == "__init__"]  # type: ignore[union-attr]
    bindings = names.attribute_bindings(owner, attribute)  # type: ignore[arg-type]
    if not inits or len(bindings) != 1 or bindings[0].scope.node is not inits[-1]:
        return False
    stored = bindings[0].bound_value
    params = [param for param in inits[-1].params.params][1:]
    param = next((p for p in params if type(stored) is cst.Name and p.name.value == stored.value), None)  # type: ignore[union-attr]
    if param is None or any(arg.star for arg in construction.args):  # type: ignore[union-attr]
        return False
    names_after_self = tuple(p.name.value for p in params)
    index = names_after_self.index(param.name.value)
    keyword = [arg.value for arg in construction.args if arg.keyword is not None and arg.keyword.value == param.name.value]  # type: ignore[union-attr]
    positional = [arg.value for arg in construction.args if arg.keyword is None]  # type: ignore[union-attr]
    passed = keyword[0] if keyword else positional[index] if index < len(positional) else param.default
    return type(passed) is cst.Name and passed.value == "None"  # type: ignore[union-attr]
