"""What a call or a callable expression runs, as far as one file shows: a function or method of the file
(also through a lambda, `functools.partial`, `self.<attr>` and single assignments), the `forward` of a
module built from a class of the file (also an element of `nn.ModuleList`/`nn.ModuleDict`), or a
library callable by its qualified name. `CallableResolution` is mixed into `Names`; the rules ask
`names.definition_of(call)`, `names.callable_of(expr)`, `names.instance_of(call)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Optional, Union

import libcst as cst

from stabfix.model.source.scopes import Binding, Scope, Use, first_parameter
from stabfix.model.source.syntax import TUPLES_AND_LISTS


@dataclass(frozen=True)
class Callee:
    """What a callable expression runs (see `Names.callable_of`)."""

    kind: str  # function (a def, or a module's forward), lambda, class (no forward found), library
    node: Optional[Union[cst.FunctionDef, cst.Lambda, cst.ClassDef]] = None
    qualified: Optional[str] = None  # for library callables: `torch.nn.LSTM`
    module_class: Optional[cst.ClassDef] = None  # when `node` is the forward of a module class of this file


class CallableResolution:
    """Questions about what calls run, over the bindings `Names` recorded (ask them after the traversal)."""

    # recorded by `BindingRecorder` (see there)
    scopes: dict[cst.CSTNode, Scope]
    uses: dict[cst.Name, Use]

    if TYPE_CHECKING:

        def bindings_of(self, name: cst.Name) -> list[Binding]: ...

        def attribute_bindings(self, class_node: cst.ClassDef, attribute: str) -> list[Binding]: ...

        def qualify(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]: ...

        def _module_bindings(self, name: str) -> list[Binding]: ...

        def single_value(self, name: cst.Name) -> Optional[cst.BaseExpression]: ...

    def calls_running(self, function: cst.FunctionDef, calls: list[cst.Call]) -> list[cst.Call]:
        """The calls of `calls` (a file's call list, kept by its owner) whose `definition_of` is `function`:
        every call resolved once per list, not once per question (a question per parameter per call is
        quadratic in the file)."""
        index = getattr(self, "_calls_by_definition", None)
        if index is None or index[0] is not calls or index[1] != len(calls):  # a list still growing: index again
            by_definition: dict[int, list[cst.Call]] = {}
            for call in calls:
                found = self.definition_of(call)
                if found is not None:
                    by_definition.setdefault(id(found), []).append(call)
            index = (calls, len(calls), by_definition)
            self._calls_by_definition = index
        return index[2].get(id(function), [])

    def definition_of(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file a call runs: `helper(x)` bound by a `def` the call sees,
        `self.method(x)` defined in the enclosing class, or a method of a class of this file called on
        an instance the code builds (`Steps().run(x)`, `steps = Steps(); steps.run(x)`: `instances.py`)."""
        found = self._own_definition(call)
        return found if found is not None else self.method_on_instance(call)

    def method_on_instance(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The `def` a call on an instance of a class of this file runs (the last one of its name in the class
        body, as Python keeps), or None: not an instance built here, or no such method."""
        func = call.func
        # exact types (libcst has no subclass of them): asked of every call, where a failing `isinstance` on a
        # libcst class goes through `ABCMeta.__instancecheck__`
        if type(func) is not cst.Attribute or func.attr.value not in self._method_names():  # type: ignore[attr-defined]
            return None
        receiver: Optional[cst.BaseExpression] = func.value  # type: ignore[attr-defined]
        if type(receiver) is cst.Name:
            receiver = self.single_value(receiver) if receiver in self.uses else None  # type: ignore[arg-type]
        if type(receiver) is not cst.Call or type(receiver.func) is not cst.Name:  # type: ignore[union-attr]
            return None
        built = self.instance_of(receiver)
        if built is None:
            return None
        owner = built.module_class if built.kind == "function" else built.node if built.kind == "class" else None
        if type(owner) is not cst.ClassDef or type(owner.body) is not cst.IndentedBlock:
            return None
        methods = [item for item in owner.body.body if type(item) is cst.FunctionDef and item.name.value == func.attr.value]
        return methods[-1] if methods else None

    def _own_definition(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        func = call.func
        if type(func) is cst.Name:  # exact types, as in `method_on_instance`
            bindings = self.bindings_of(func)  # type: ignore[arg-type]
            defs = [b.node for b in bindings if b.kind == "def"]
            return defs[-1] if defs and len(defs) == len(bindings) else None  # type: ignore[return-value]
        if type(func) is cst.Attribute and type(func.value) is cst.Name:  # type: ignore[attr-defined]
            if func.attr.value not in self._method_names():  # type: ignore[attr-defined]
                return None
            use = self.uses.get(func.value)  # type: ignore[attr-defined]
            if use is None:
                return None
            scope = use.scope
            while scope is not None and type(scope.node) is not cst.FunctionDef:
                scope = scope.parent
            owner = scope.parent if scope is not None else None
            if owner is not None and not owner.is_class and scope is not None:
                # a helper handed the instance by the class's methods (`def embed(model, x): model.encode(x)`)
                handed = self.handed_instance_class(scope.node, func.value.value)  # type: ignore[attr-defined,arg-type]
                owner = self.scopes.get(handed) if handed is not None else None
                if owner is None:
                    return None
            elif owner is None or not owner.is_class or first_parameter(scope.node) != func.value.value:  # type: ignore[arg-type]
                return None
            bindings = owner.bindings.get(func.attr.value, [])
            defs = [b.node for b in bindings if b.kind == "def"]
            return defs[-1] if defs and len(defs) == len(bindings) else None  # type: ignore[return-value]
        return None

    def _method_names(self) -> set[str]:
        """The names of the defs recorded so far and of the defs in the bodies of the classes recorded so far:
        `obj.name(...)` with any other name runs no def of the file, whatever `obj` is (most calls of a file are
        `torch.zeros(...)`, `loss.item()`: spared the walk up their scopes and the bindings of their receiver).
        A def's binding and its scope are recorded together, and a class's scope with it; scopes only grow."""
        known: Optional[tuple[int, set[str]]] = getattr(self, "_defined_names", None)
        if known is not None and known[0] == len(self.scopes):
            return known[1]
        seen, names = known if known is not None else (0, set())
        for node in islice(self.scopes, seen, None):
            if type(node) is cst.FunctionDef:
                names.add(node.name.value)
            elif type(node) is cst.ClassDef and type(node.body) is cst.IndentedBlock:
                names.update(item.name.value for item in node.body.body if type(item) is cst.FunctionDef)
        self._defined_names = (len(self.scopes), names)
        return names

    def own_function_of(self, expr: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """`callable_of(expr)` when it is a function or method of this file (not a module class's `forward`).
        Asked of every call's callee: an attribute that is neither `__call__`/`forward` nor read off a method's
        own receiver (`torch.zeros`, `loss.item`, most of a file's calls) can only name a library callable."""
        if type(expr) is cst.Attribute and expr.attr.value not in ("__call__", "forward") and (
                type(expr.value) is not cst.Name or self._self_class(expr.value) is None):  # type: ignore[attr-defined]
            return None
        callee = self.callable_of(expr)
        if callee is None or callee.kind != "function" or callee.module_class is not None:
            return None
        return callee.node if type(callee.node) is cst.FunctionDef else None  # type: ignore[return-value]

    def callable_of(self, expr: cst.BaseExpression, depth: int = 0) -> Optional["Callee"]:
        """What calling `expr` runs: a function or method of this file (also through a lambda or
        `functools.partial`), the `forward` of a module built from a class of this file, or a library
        callable or module class by its qualified name (`torch.nn.LSTM`). Follows single assignments,
        `self.<attr>` bound in the class, and elements of module containers (`self.layers[i]`,
        `for name, cell in self.cells.items()` over `nn.ModuleList([...])`/`nn.ModuleDict({...})`)."""
        if depth > 6:
            return None
        node_type = type(expr)  # exact types (see node_fields.node_kinds)
        if node_type is cst.Lambda:
            return Callee("lambda", expr)
        if node_type is cst.Call:
            target = self.qualify(expr.func) or ""
            if target in ("functools.partial", "functools.partialmethod") and expr.args:
                return self.callable_of(expr.args[0].value, depth + 1)
            return self.instance_of(expr, depth + 1)
        if node_type is cst.Subscript:
            return self.element_of(expr.value, depth + 1)
        if node_type is cst.Attribute and expr.attr.value in ("__call__", "forward"):
            target = self.callable_of(expr.value, depth + 1)  # `layer.__call__`, `self.block.forward`
            if target is not None and target.kind != "library":
                return target
        if node_type is cst.Attribute and type(expr.value) is cst.Name:
            owner = self._self_class(expr.value)
            if owner is not None:
                members = self.scopes[owner].bindings.get(expr.attr.value, []) if owner in self.scopes else []
                defs = [b.node for b in members if b.kind == "def"]
                if defs and len(defs) == len(members):
                    return Callee("function", defs[-1])
                values = [b.bound_value for b in self.attribute_bindings(owner, expr.attr.value)]
                found = {id(c.node) if c.node is not None else c.qualified: c
                         for v in values if v is not None and (c := self.callable_of(v, depth + 1)) is not None}
                return next(iter(found.values())) if len(found) == 1 else None
        qualified = self.qualify(expr)
        if qualified is not None:
            return Callee("library", None, qualified)
        if type(expr) is cst.Name:
            bindings = self.bindings_of(expr) if expr in self.uses else self._module_bindings(expr.value)
            defs = [b.node for b in bindings if b.kind == "def"]
            if defs and len(defs) == len(bindings):
                return Callee("function", defs[-1])
            if len(bindings) == 1:
                binding = bindings[0]
                if binding.kind == "for" and binding.value is not None:
                    return self.element_of(_iterated(binding.value), depth + 1)
                if binding.bound_value is not None:
                    return self.callable_of(binding.bound_value, depth + 1)
        return None

    def instance_of(self, call: cst.Call, depth: int = 0) -> Optional["Callee"]:
        """The module (or object) a constructor call builds: a class of this file (calling it runs its
        `forward`, or `__call__`) or a library class by qualified name."""
        func = call.func
        if type(func) is cst.Name:
            bindings = self.bindings_of(func) if func in self.uses else self._module_bindings(func.value)
            classes = [b.node for b in bindings if b.kind == "class"]
            if classes and len(classes) == len(bindings):
                owner = classes[-1]
                members = self.scopes[owner].bindings if owner in self.scopes else {}
                for method in ("forward", "__call__"):
                    defs = [b.node for b in members.get(method, []) if b.kind == "def"]
                    if defs:
                        return Callee("function", defs[-1], None, owner)
                return Callee("class", owner)  # type: ignore[arg-type]
        qualified = self.qualify(func)
        return Callee("library", None, qualified) if qualified is not None else None

    def element_of(self, container: cst.BaseExpression, depth: int) -> Optional["Callee"]:
        """What an element of a module container runs: `nn.ModuleList([Block() for _ in r])`,
        `nn.ModuleDict({k: Cell() ...})`, `[A(), A()]`, also through `.items()`/`.values()`."""
        if type(container) is cst.Call and type(container.func) is cst.Attribute:
            if container.func.attr.value in ("items", "values", "children", "modules"):
                return self.element_of(container.func.value, depth + 1)
        values: list[Optional[cst.BaseExpression]] = [container]
        if type(container) is cst.Attribute and type(container.value) is cst.Name:
            owner = self._self_class(container.value)
            values = [b.bound_value for b in self.attribute_bindings(owner, container.attr.value)] if owner else []
        elif type(container) is cst.Name:
            bindings = self.bindings_of(container) if container in self.uses else []
            values = [b.bound_value for b in bindings]
        for value in values:
            element = _first_element(value)
            callee = self.callable_of(element, depth + 1) if type(element) is cst.Call else None
            if callee is not None:
                return callee
        return None

    def _self_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        """The class whose method's first parameter `name` is (`self` in a method), or None."""
        use = self.uses.get(name)
        if use is None:
            return None
        scope: Optional[Scope] = use.scope
        while scope is not None and type(scope.node) is not cst.FunctionDef:
            scope = scope.parent
        owner = scope.parent if scope is not None else None
        if owner is None or not owner.is_class or first_parameter(scope.node) != name.value:  # type: ignore[union-attr,arg-type]
            return None
        return owner.node  # type: ignore[return-value]


def _first_element(value: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """The first element a container expression builds: `nn.ModuleList([Block() for _ in r])` -> `Block()`."""
    if type(value) is cst.Call and value.args:
        value = value.args[0].value  # nn.ModuleList([...]) / nn.ModuleDict({...}) / nn.Sequential(a, b)
    if type(value) in (cst.ListComp, cst.GeneratorExp):
        return value.elt
    if type(value) is cst.DictComp:
        return value.value
    if type(value) in TUPLES_AND_LISTS and value.elements:
        return value.elements[0].value
    if type(value) is cst.Dict and value.elements and type(value.elements[0]) is cst.DictElement:
        return value.elements[0].value
    return value if type(value) is cst.Call else None


def _iterated(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """`self.cells.items()` -> `self.cells`; `enumerate(xs)`/`zip(xs, ...)` -> `xs`."""
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value in ("enumerate", "zip"):
        return iterable.args[0].value if iterable.args else iterable
    return iterable
