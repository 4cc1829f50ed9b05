"""Callers: how the file calls one of its functions (the top-down half of the `summaries` part).

- `signature(def)`: a method's receiver (`self`) and the positional parameters after it;
- `passed_for(parameter)`: what every call of the file passes for a parameter (its default where a call
  leaves it out; for a parameter of a class's `__init__`, what every construction `Cls(...)` passes), or None
  when a call cannot be tied to the function, hides what it passes (`*args`), the function (or the class) is
  read other than by calling it (a callback, a base class: its calls are out of sight) or never called;
- `method_called(call)`: the method of the file that `obj.method(...)` runs when `obj` is not the method's
  own receiver: an instance of a class of the file the code builds, or, when the file shows nothing about
  `obj` (a parameter no call of the file binds), the one class of the file that defines that method;
- `always_called_without_grad(def)`: every call of the function in the file runs with autograd off (a
  `no_grad` block or decorator around it, or a caller that is itself only called so, `MAX_CALLERS` up).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.events import Events
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names

MAX_CALLERS = 8  # callers of callers followed up from a function


class Callers:
    def __init__(self, names: Names, events: Events) -> None:
        self.names = names
        self.events = events
        self._without_grad: dict[cst.FunctionDef, bool] = {}
        self._escaping: Optional[set[str]] = None

    def signature(self, function: cst.FunctionDef) -> tuple[Optional[str], tuple[str, ...]]:
        params = [param.name.value for param in function.params.params]
        receiver = params[0] if params and self._is_method(function) else None
        return receiver, tuple(params[1:] if receiver is not None else params)

    def class_of(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        scope = self.names.scope_of(function)
        parent = scope.parent if scope is not None else None
        return parent.node if parent is not None and parent.is_class else None  # type: ignore[return-value]

    def method_called(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        func = call.func
        if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
            return None
        on_instance = self.names.method_on_instance(call)  # `gate = Gate(); gate.train_step(x)`
        if on_instance is not None:
            return on_instance
        if self.names.definition_of(call) is not None or self.names.qualify(func.value) is not None:
            return None  # the receiver's own method (`self.m()`), or a module of an import
        bindings = self.names.reaching(func.value)
        if not bindings:
            return None
        classes: set[cst.ClassDef] = set()
        for binding in bindings:
            held = self.passed_for(binding) if binding.kind == "param" else [binding.bound_value]
            if binding.kind == "param" and held is None:
                continue  # nothing shown about what it holds
            for built in held or [None]:
                callee = self.names.instance_of(built) if type(built) is cst.Call else None
                owner = callee.module_class or callee.node if callee is not None else None
                if type(owner) is not cst.ClassDef:
                    return None  # something else, or an instance of a library class
                classes.add(owner)
        if not classes:  # only unknown parameters: the class of the file that has such a method
            classes = {scope.node for scope in self.names.scopes.values()  # type: ignore[misc]
                       if scope.is_class and _defines(scope.bindings.get(func.attr.value, []))}
        if len(classes) != 1:
            return None
        (owner,) = classes
        scope = self.names.scopes.get(owner)
        defs = [b.node for b in scope.bindings.get(func.attr.value, [])] if scope is not None else []
        return defs[-1] if _defines(scope.bindings.get(func.attr.value, [])) else None  # type: ignore[return-value,union-attr]

    def passed_for(self, parameter: Binding) -> Optional[list[cst.BaseExpression]]:
        function = parameter.scope.node
        if parameter.kind != "param" or type(function) is not cst.FunctionDef or self._escapes(function):
            return None
        receiver, positional = self.signature(function)
        if parameter.name == receiver or parameter.name not in positional:
            return None
        calls = self._calls_running(function)
        if calls is None:
            return None
        passed: list[cst.BaseExpression] = []
        for call in calls:
            if any(arg.star for arg in call.args):  # type: ignore[attr-defined]
                return None
            value = argument(call, positional, parameter.name) or parameter.value  # type: ignore[arg-type]
            if value is None:
                return None
            passed.append(value)
        return passed

    def _calls_running(self, function: cst.FunctionDef) -> Optional[list[cst.Call]]:
        """Every call of the file that runs `function`: its calls by name (`helper(x)`, `self.method(x)`), or for
        a class's `__init__` the constructions of the class (`Trainer(model, gpu_id=rank)`); None when there is
        none, when one may run something else, or when the class is read other than by calling it (a base of
        another class, a factory handed out: constructions out of sight)."""
        owner = self.class_of(function) if function.name.value == "__init__" else None
        if owner is None:
            calls = [event.node for event in self.events.calls_of(function.name.value)]
            return calls if calls and all(self.names.definition_of(call) is function for call in calls) else None  # type: ignore[arg-type]
        calls = [event.node for event in self.events.calls_of(owner.name.value)]
        if not calls or self._name_escapes(owner.name.value):
            return None
        for call in calls:
            bindings = self.names.bindings_of(call.func) if type(call.func) is cst.Name else []  # type: ignore[attr-defined]
            if not bindings or any(binding.kind != "class" or binding.node is not owner for binding in bindings):
                return None
        return calls  # type: ignore[return-value]

    def always_called_without_grad(self, function: Optional[cst.FunctionDef], depth: int = 0) -> bool:
        if function is None or depth > MAX_CALLERS:
            return False
        if function in self._without_grad:
            return self._without_grad[function]
        self._without_grad[function] = False  # a caller that reaches back here proves nothing
        calls = self.events.calls_of(function.name.value)
        answer = bool(calls)
        for event in calls:
            func = event.node.func
            root = func.value if type(func) is cst.Attribute else func
            use = self.names.uses.get(root) if type(root) is cst.Name else None
            if use is not None and use.grad_off:
                continue
            caller = event.site.function
            if event.site.in_lambda or caller is None or caller is function or not self.always_called_without_grad(caller, depth + 1):
                answer = False
                break
        self._without_grad[function] = answer
        return answer

    def _escapes(self, function: cst.FunctionDef) -> bool:
        """Its name is read other than as the function of a call (handed out as a callback, stored)."""
        return self._name_escapes(function.name.value)

    def _name_escapes(self, name: str) -> bool:
        """A function's or class's name is read other than as the function of a call (a callback, a base class)."""
        if self._escaping is None:
            called = {id(event.node.func) for event in self.events.of_kind("call")}  # type: ignore[attr-defined]
            called |= {id(binding.node.name) for binding in self.names.all_bindings()  # type: ignore[attr-defined]
                       if binding.kind in ("def", "class", "param")}  # the names a definition binds
            self._escaping = {name.value for name in self.names.uses if id(name) not in called}
        return name in self._escaping

    def _is_method(self, function: cst.FunctionDef) -> bool:
        if self.class_of(function) is None:
            return False
        return "staticmethod" not in {dotted_name(d.decorator) for d in function.decorators}


def argument(call: cst.Call, parameters: tuple[str, ...], parameter: str) -> Optional[cst.BaseExpression]:
    """The expression a call passes for one of the callee's positional parameters (receiver left out)."""
    index = parameters.index(parameter)
    keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == parameter]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return keyword[0] if keyword else positional[index] if index < len(positional) else None


def _defines(bindings: list[Binding]) -> bool:
    """Every binding of the name in a class body is a `def`: it names a method."""
    return bool(bindings) and all(binding.kind == "def" for binding in bindings)
