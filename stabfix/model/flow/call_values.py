"""What a call returns, for the `values` part: a function of this file (at a tuple position, joined over its
`return`s, through the parameter a returned part comes from) or of another scanned file (its own `values`, handed
over as `ReturnedValues`). A base of `Values`: it asks `value_of` and `_step` back for the parts it finds."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from stabfix.model.calls.devices import method_chain
from stabfix.model.flow.value_facts import ParameterPassage, ReturnedValues, Value, argument_at, element_at
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.origins import passed_argument


class CallReturns:
    names: Names
    foreign_returns: Callable[[str], Optional[ReturnedValues]]

    if TYPE_CHECKING:

        def qualify(self, expr: cst.BaseExpression) -> Optional[str]: ...

        def value_of(self, expr: cst.BaseExpression, depth: int = 0) -> Value: ...

        def _step(self, value: Value, name: str, node: Optional[cst.BaseExpression], depth: int = 0) -> Value: ...

    def _returned_by(self, call: cst.Call, position: tuple[int, ...], depth: int) -> Optional[Value]:
        """What a function of this file returns (at a tuple position), joined over its returns."""
        if depth > 4:
            return None
        function = self.names.definition_of(call) or method_of_instance(self.names, call)
        if function is None:
            return self._foreign_returned(call, position, depth)
        if function not in self.names.returns:
            return None
        values = []
        for returned in self.names.returns[function]:
            part = element_at(returned, position)
            if part is None:
                return None
            handed = self._through_parameter(part, function, call, depth)
            values.append(handed if handed is not None else self.value_of(part, depth + 2))
        joined = Value.join(values)
        if function in self.names.grad_off_functions and not joined.not_tensor:
            joined = replace(joined, snapshot=True, detached=True)
        return joined

    def _foreign_returned(self, call: cst.Call, position: tuple[int, ...], depth: int = 0) -> Optional[Value]:
        """What a function of another scanned file returns (at a tuple position), by that file's own values."""
        func = call.func
        root = func
        while type(root) is cst.Attribute:
            root = root.value
        qualified = self.qualify(func) if type(root) is cst.Name else None
        answer = self.foreign_returns(qualified) if qualified and not qualified.startswith("torch.") else None
        if answer is None:
            return None
        if not position:
            return self._passed(answer.whole_passage, call, depth) or answer.whole
        if len(position) != 1 or position[0] >= len(answer.elements):
            return None
        return self._passed(answer.passages[position[0]], call, depth) or answer.elements[position[0]]

    def _passed(self, passage: Optional["ParameterPassage"], call: cst.Call, depth: int) -> Optional[Value]:
        """What `call` passes for the parameter a foreign function returns part of, through the same steps."""
        argument = argument_at(call, passage.index, passage.name) if passage is not None else None
        if passage is None or argument is None:
            return None
        value = self.value_of(argument, depth + 2)
        for name in passage.steps:
            value = self._step(value, name, None, depth)
        return value

    def _through_parameter(self, part: cst.BaseExpression, function: cst.FunctionDef, call: cst.Call,
                           depth: int) -> Optional[Value]:
        """A returned value made from one of the function's parameters (`return batch[0]`, `return x.cpu()`):
        what this call passes for it, taken through the same steps; None when it is made otherwise or the
        call does not show the argument."""
        root, steps = method_chain(part, self.qualify)
        if type(root) is not cst.Name:
            return None
        bindings = self.names.reaching(root)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].scope.node is not function:
            return None
        argument = passed_argument(function, call, bindings[0].name)
        if argument is None:
            return None
        value = self.value_of(argument, depth + 2)
        for name, node in steps:
            value = self._step(value, name, node, depth)
        return value
