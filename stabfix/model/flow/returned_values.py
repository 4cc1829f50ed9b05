"""What a function hands back, node-free so that another file's model can pass it over: the value of its
result and of each element of a returned tuple (`returned_values`), where a returned value is a part of
one of its parameters (`ParameterPassage`: at a call, what the call passes there), and which of its
parameters an optimizer of its file trains (`trained_parameters`). Built on `values`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from stabfix.model.calls.devices import method_chain
from stabfix.model.flow.value_facts import ParameterPassage, ReturnedValues, Value
from stabfix.model.flow.values import Values


def returned_values(values: Values, function: cst.FunctionDef) -> Optional[ReturnedValues]:
    """What `function` returns, by the values of its own file (None when it returns nothing)."""
    returns = values.names.returns.get(function, [])
    if not returns:
        return None
    off = function in values.names.grad_off_functions

    def joined(parts: list[cst.BaseExpression]) -> Value:
        value = Value.join([values.value_of(part) for part in parts])
        return replace(value, snapshot=True, detached=True) if off and not value.not_tensor else value

    def passage(parts: list[cst.BaseExpression]) -> Optional[ParameterPassage]:
        found = {_passage(values, function, part) for part in parts}
        return found.pop() if len(found) == 1 and not off else None  # under no_grad the call makes a snapshot

    sizes = {len(r.elements) if type(r) is cst.Tuple else -1 for r in returns}
    size = sizes.pop() if len(sizes) == 1 else -1
    columns = [[r.elements[i].value for r in returns] for i in range(size)] if size > 0 else []  # type: ignore[attr-defined]
    return ReturnedValues(joined(list(returns)), tuple(joined(column) for column in columns),
                          passage(list(returns)), tuple(passage(column) for column in columns))


def _passage(values: Values, function: cst.FunctionDef, part: cst.BaseExpression) -> Optional[ParameterPassage]:
    """`part` as a parameter of `function` taken through subscripts and attribute reads, or None."""
    root, steps = method_chain(part, values.qualify)
    if type(root) is not cst.Name or any(not (name == "[]" or name.startswith(".")) for name, _ in steps):
        return None
    bindings = values.names.reaching(root)
    if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].scope.node is not function:
        return None
    positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
    if root.value not in positional:
        return None
    return ParameterPassage(positional.index(root.value), root.value, tuple(name for name, _ in steps))


def trained_parameters(values: Values, function: cst.FunctionDef) -> tuple[tuple[int, str], ...]:
    """Node-free: the positional parameters of `function`, by position and name, whose tensors an optimizer
    built in its file trains (`def make_opt(w, noise): return Adam([w] + noise)`)."""
    scope = values.names.scopes.get(function)
    if scope is None:
        return ()
    trained = values._trained_bindings()
    positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
    return tuple((index, name) for index, name in enumerate(positional)
                 if any(b.kind == "param" and id(b) in trained for b in scope.bindings.get(name, [])))
