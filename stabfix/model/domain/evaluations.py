"""Evaluation phases that never switch modes: where a model is run over data only to be measured.

`unswitched()` yields, for each function of the file that is one, the function, the parameter holding
the evaluated module and its first forward that runs with autograd on. A function is one when:

- it runs forwards of a module it is handed (`net(X)`, `model.forward(x)`, `model.validation_step(b)`
  reaching `self(x)`: `modes.scan`) in a loop or comprehension, with autograd on;
- it trains nothing: no effect at all in its summary (no backward, step, gradient clear, mode switch,
  store into a container that outlives it, callees included), asks for no gradient, and every call it
  runs for its effect alone (its result unused) is one the file can see into and that cannot
  differentiate (`flow/grad_reach.py`: `update(opt, loss)` imported from elsewhere may train);
- it is called, and every call of it runs with autograd on from a function that trains (a backward or a
  step, its own or its callees') the very module it hands in (calls it, or hands it to a call that
  trains), and nothing that call returns is differentiated later (bound, or handed to a container's
  method, then fed to a backward; a backward in the same statement).

Unknown is never proof: an evaluation no call of the file reaches (a library's `evaluate_loss`) is not
one here, and neither is a function whose callers hand something the file cannot tie to training.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from stabfix.model.flow.grad_reach import GradReach
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.training.modes import in_harness

_TRAINING_EFFECTS = frozenset({"backward", "step"})
# a module's own API: calling one of these hands the module in, it does not run (train) it
_NOT_RUNNING = frozenset({"eval", "train", "to", "cuda", "cpu", "parameters", "named_parameters", "state_dict"})


class Evaluations:
    def __init__(self, names, values, modules, modes, events, history, summaries) -> None:
        self.names = names
        self.values = values
        self.modules = modules
        self.modes = modes
        self.events = events
        self.history = history
        self.summaries = summaries
        self._found: Optional[list[tuple[cst.FunctionDef, str, cst.Call]]] = None

    def unswitched(self) -> list[tuple[cst.FunctionDef, str, cst.Call]]:
        if self._found is None:
            self._found = list(self._search())
        return self._found

    def _search(self) -> Iterator[tuple[cst.FunctionDef, str, cst.Call]]:
        names, summaries, modes = self.names, self.summaries, self.modes
        for function in [node for node in names.scopes if type(node) is cst.FunctionDef]:
            calls = self.events.calls_of(function.name.value)  # the cheap questions first
            if not calls or function in names.grad_off_functions or type(function.body) is not cst.IndentedBlock \
                    or modes.in_function(function) or in_harness(function, None):
                continue
            if summaries.of(function).effects or summaries.always_called_without_grad(function):
                continue
            _, parameters = summaries.callers.signature(function)
            for index, parameter in enumerate(parameters):
                facts = modes.scan(list(function.body.body), parameter)
                live = [call for call, grad_on in facts.forwards if grad_on and any(call is r for r in facts.repeated)]
                if not live or facts.backward or facts.needs_grad or facts.frozen:
                    continue
                if self._runs_unseen_effect(function, {id(call) for call, _ in facts.forwards}, parameter):
                    break
                if all(self._trains_what_it_hands(event, function, index) for event in calls):
                    yield function, parameter, live[0]
                break

    def _runs_unseen_effect(self, function: cst.FunctionDef, forwards: set[int], receiver: str) -> bool:
        reach = GradReach(self.names, self.values, self.modules.is_module, self.modes.is_update)
        return any(reach.call(statement.value, forwards, receiver, 0, set()) is not None
                   for statement in _expression_statements(function) if type(statement.value) is cst.Call)

    def _trains_what_it_hands(self, event, function: cst.FunctionDef, index: int) -> bool:
        caller, call = event.site.function, event.node
        if caller is None or event.site.in_lambda or self.names.definition_of(call) is not function:
            return False
        root = call.func.value if type(call.func) is cst.Attribute else call.func
        use = self.names.uses.get(root) if type(root) is cst.Name else None
        positional = [arg for arg in call.args if arg.keyword is None]
        if (use is not None and use.grad_off) or any(arg.star for arg in call.args) or index >= len(positional):
            return False
        if not {effect.kind for effect in self.summaries.of(caller).effects} & _TRAINING_EFFECTS:
            return False
        if self._result_differentiated(event, caller):
            return False
        handed = _spelled(positional[index].value)
        return any(self._trains(other, handed) for other in _calls_within(caller.body) if other is not call)

    def _trains(self, call: cst.Call, handed: str) -> bool:
        """`call` runs the handed module (`model(x)`, `model.training_step(b)`) or hands it to a call
        that trains (`train_epoch(model, ...)` with a backward or a step)."""
        func = _spelled(call.func)
        if func == handed or func.startswith(handed + "."):
            return func.rsplit(".", 1)[-1] not in _NOT_RUNNING
        if any(_spelled(arg.value) == handed for arg in call.args):
            return any(effect.kind in _TRAINING_EFFECTS for effect in self.summaries.effects_at(call))
        return False

    def _result_differentiated(self, event, caller: cst.FunctionDef) -> bool:
        """What the call returns may be differentiated (unknown counts as yes)."""
        statement = event.site.statement
        if statement is None:
            return True
        calls = _calls_within(statement)
        if any(type(c.func) is cst.Attribute and c.func.attr.value == "backward" for c in calls):
            return True
        bound = {name.value for name in _assigned_names(statement)}
        bound |= {_spelled(c.func.value) for c in calls
                  if type(c.func) is cst.Attribute and any(arg.value is event.node for arg in c.args)}
        return bool(bound) and self.history.feeds_backward(bound, caller, after=event.site.names_order)


def _spelled(node: cst.CSTNode) -> str:
    return code_of(node, limit=100_000)


def _calls_within(node: cst.CSTNode) -> list[cst.Call]:
    collector = _CallCollector()
    visit_readonly(node, collector)
    return collector.found


class _CallCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def _expression_statements(function: cst.FunctionDef) -> list[cst.Expr]:
    """The expression statements of a function's own body (nested functions and lambdas run later)."""
    collector = _OwnExpressionStatements()
    visit_readonly(function.body, collector)
    return collector.found


class _OwnExpressionStatements(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Expr] = []

    def visit_Expr(self, node: cst.Expr) -> None:
        self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _assigned_names(statement: cst.CSTNode) -> list[cst.Name]:
    collector = _AssignedNames()
    visit_readonly(statement, collector)
    return collector.found


class _AssignedNames(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Name] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.found.extend(_names_in(node.target))


def _names_in(target: cst.BaseExpression) -> list[cst.Name]:
    if type(target) is cst.Name:
        return [target]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _names_in(element.value)]
    return []
