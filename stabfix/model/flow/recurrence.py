"""Recurrent state: whether a callable returns a state it carries from step to step, or changes state.

Built on `Names` (no traversal of its own). Asked of a callee (`Names.callable_of`):

- `state_output(callee)`: which returned value is recurrent state, in words, or None:
  - a torch RNN module (`nn.LSTM`/`nn.GRU`/`nn.RNN` return `output, h_n`; the `*Cell` modules return
    the state itself);
  - a function (or a module's `forward`) returning a tuple one of whose elements is state: a name
    carried around a loop over time (re-bound from its own previous value together with a
    per-iteration input, `state = lam * state + u[:, t]`, `h = cell(x_t, h)`), the state output of a
    recurrent callee (`out, (h, c) = self.lstm(x, hc)`, recursively through same-file modules), or a
    container filled with such states (`new_states[name] = ...`, `states.append(h)`).
  A loop that only threads an activation through layers (`for blk in self.blocks: x = blk(x)`) carries
  no state: the per-iteration thing is the callee, not an input.
- `mutation(function)`: the first statement that changes state outside the call, in words, or None:
  assigning or updating `self.<attr>` (also `self.cache[k] = v`, `self.buf.copy_(x)`,
  `self.hist.append(x)`), or appending to / storing into a container the function did not create.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from stabfix.model.source.names import Callee, Names
from stabfix.model.source.syntax import DEFINITIONS, code_of, walk_scope
from stabfix.model.source.node_fields import children, code_children

# torch recurrent modules: the position of the state in what they return (None: the whole result)
RECURRENT_MODULES: dict[str, Optional[int]] = {
    "torch.nn.LSTM": 1, "torch.nn.GRU": 1, "torch.nn.RNN": 1,
    "torch.nn.LSTMCell": None, "torch.nn.GRUCell": None, "torch.nn.RNNCell": None,
}
_INPLACE_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})
Function = Union[cst.FunctionDef, cst.Lambda]


def recurrent_module(qualified: Optional[str]) -> Optional[str]:
    """`torch.nn.LSTM` (also `torch.nn.modules.rnn.LSTM`) -> `torch.nn.LSTM`; None for anything else."""
    if not qualified:
        return None
    short = "torch.nn." + qualified.rsplit(".", 1)[-1]
    return short if qualified.startswith("torch.nn") and short in RECURRENT_MODULES else None


class Recurrence:
    def __init__(self, names: Names) -> None:
        self.names = names
        self._busy: set[int] = set()

    # --- state outputs ------------------------------------------------------------------------------
    def state_output(self, callee: Optional[Callee], position: Optional[int] = None) -> Optional[str]:
        """Why (element `position` of) what the callee returns is recurrent state, or None."""
        if callee is None:
            return None
        if callee.kind == "library":
            module = recurrent_module(callee.qualified)
            if module is None:
                return None
            state_at = RECURRENT_MODULES[module]
            if state_at is None or position is None or position == state_at:
                return f"`{module.rsplit('.', 1)[-1]}` returns its hidden state"
            return None
        node = callee.node
        if type(node) is cst.Lambda:
            return self._returned_state(node, node.body, position)
        if type(node) is not cst.FunctionDef or id(node) in self._busy:
            return None
        self._busy.add(id(node))
        try:
            for returned in self.names.returns.get(node, []):
                reason = self._returned_state(node, returned, position)
                if reason is not None:
                    return reason
        finally:
            self._busy.discard(id(node))
        return None

    def _returned_state(self, function: Function, returned: cst.BaseExpression, position: Optional[int]):
        if type(returned) is cst.Tuple:
            elements = [e.value for e in returned.elements]
            chosen = elements if position is None else elements[position:position + 1]
            for element in chosen:
                reason = self._is_state(function, element)
                if reason is not None:
                    return reason
            return None
        if type(returned) is cst.Call:  # `return self.lstm(x, hc)`: what the callee returns
            return self.state_output(self.names.callable_of(returned.func), position)
        return None

    def _is_state(self, function: Function, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        if depth > 4:
            return None
        if type(expr) is cst.Tuple:
            return next((r for e in expr.elements if (r := self._is_state(function, e.value, depth + 1))), None)
        if type(expr) is cst.Call:
            return self.state_output(self.names.callable_of(expr.func))
        if type(expr) is cst.Subscript and type(expr.value) is cst.Name:
            return self._is_state(function, expr.value, depth + 1)
        if type(expr) is not cst.Name or type(function) is not cst.FunctionDef:
            return None
        carried = self._carried_in_loop(function, expr.value)
        if carried is not None:
            return f"`{expr.value}` is carried from one time step to the next, {carried}"
        for binding in self.names.reaching(expr):
            value = binding.value
            if binding.kind == "unpack" and type(value) is cst.Call and binding.position:
                reason = self.state_output(self.names.callable_of(value.func), binding.position[0])
                if reason is not None:
                    return f"`{expr.value}` is the state output of `{code_of(value.func, 40)}`"
            elif binding.kind == "assign" and value is not None and value is not expr:
                if type(value) in (cst.Name, cst.Subscript, cst.Call):
                    reason = self._is_state(function, value, depth + 1)
                    if reason is not None:
                        return reason
        return self._filled_with_state(function, expr.value, depth)

    def _filled_with_state(self, function: cst.FunctionDef, name: str, depth: int) -> Optional[str]:
        """`out, new_states[k] = cell(x, prev)` / `states.append(h)`: a container of states."""
        for node in walk_scope(function):
            if type(node) is cst.Assign and type(node.value) is cst.Call:
                for target in node.targets:
                    elements = target.target.elements if type(target.target) is cst.Tuple else None
                    for index, element in enumerate(elements or []):
                        inner = element.value
                        if type(inner) is cst.Subscript and type(inner.value) is cst.Name and inner.value.value == name:
                            reason = self.state_output(self.names.callable_of(node.value.func), index)
                            if reason is not None:
                                return f"`{name}` collects the state outputs of `{code_of(node.value.func, 40)}`"
            if (
                type(node) is cst.Call
                and type(node.func) is cst.Attribute
                and node.func.attr.value == "append"
                and type(node.func.value) is cst.Name
                and node.func.value.value == name
                and node.args
                and type(node.args[0].value) is cst.Name
                and self._carried_in_loop(function, node.args[0].value.value) is not None
            ):
                return f"`{name}` collects the carried state `{node.args[0].value.value}`"
        return None

    def _carried_in_loop(self, function: cst.FunctionDef, name: str) -> Optional[str]:
        """A loop of the function re-binds `name` from its own previous value and a per-iteration input."""
        for loop in walk_scope(function):
            if type(loop) not in (cst.For, cst.While):
                continue
            per_step = _names_of_target(loop.target) if type(loop) is cst.For else set()
            assigned: dict[str, list[cst.BaseExpression]] = {}
            for node in walk_scope_of(loop.body):
                if type(node) is cst.Assign:
                    for target in node.targets:
                        for bound in _names_of_target(target.target):
                            assigned.setdefault(bound, []).append(node.value)
                elif type(node) is cst.AugAssign and type(node.target) is cst.Name:
                    assigned.setdefault(node.target.value, []).append(cst.BinaryOperation(node.target, cst.Add(), node.value))
            if name not in assigned or _iterates_callables(loop, per_step):
                continue  # `for layer in self.layers: x = layer(x)`: a stack of layers, not time steps
            reads, inputs = _dependencies(name, assigned, per_step)
            if name in reads and inputs:
                return f"re-bound in `{_loop_head(loop)}` from itself"
        return None

    # --- side effects -------------------------------------------------------------------------------
    def mutation(self, function: Function) -> Optional[str]:
        """The first statement of the function that changes state outside the call, in words."""
        if type(function) is not cst.FunctionDef:
            return None
        params = function.params.params
        self_name = params[0].name.value if params and params[0].name.value in ("self", "cls") else None
        local = {b for node in walk_scope(function) if type(node) is cst.Assign for t in node.targets
                 for b in _names_of_target(t.target)}
        for node in walk_scope(function):
            targets: list[cst.BaseExpression] = []
            if type(node) is cst.Assign:
                targets = [t.target for t in node.targets]
            elif type(node) in (cst.AugAssign, cst.AnnAssign):
                targets = [node.target]
            for target in targets:
                for leaf in _target_leaves(target):
                    root = _root_name(leaf)
                    if type(leaf) is cst.Attribute and root == self_name and self_name:
                        return f"assigns `{code_of(leaf, 40)}`"
                    if type(leaf) is cst.Subscript and root is not None and (root == self_name or root not in local):
                        return f"stores into `{code_of(leaf.value, 40)}`"
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                method = node.func.attr.value
                root = _root_name(node.func.value)
                receiver = node.func.value
                if method in _INPLACE_CONTAINER_METHODS and root is not None and (
                    (root == self_name and type(receiver) is cst.Attribute) or (root != self_name and root not in local)
                ) and root not in _param_names(function, skip_self=False) - {self_name}:
                    return f"calls `{code_of(node.func, 40)}(...)`"
                if (method.endswith("_") and not method.endswith("__") and root == self_name
                        and type(receiver) is cst.Attribute and self_name):
                    return f"updates `{code_of(receiver, 40)}` in place (`.{method}`)"
        return None


def walk_scope_of(block: cst.CSTNode):
    """`walk_scope` of a block: its nodes but the trivia, not descending into nested definitions."""
    stack: list[cst.CSTNode] = [block]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in code_children(current) if type(c) not in DEFINITIONS)


def _param_names(function: cst.FunctionDef, skip_self: bool) -> set[str]:
    params = list(function.params.posonly_params) + list(function.params.params) + list(function.params.kwonly_params)
    return {p.name.value for p in params[(1 if skip_self else 0):]}


def _names_of_target(target: cst.BaseExpression) -> set[str]:
    if type(target) is cst.Name:
        return {target.value}
    if type(target) in (cst.Tuple, cst.List):
        return {n for e in target.elements for n in _names_of_target(e.value)}
    if type(target) is cst.StarredElement:
        return _names_of_target(target.value)
    return set()


def _target_leaves(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) in (cst.Tuple, cst.List):
        return [leaf for e in target.elements for leaf in _target_leaves(e.value)]
    return [target]


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while type(expr) in (cst.Attribute, cst.Subscript):
        expr = expr.value
    return expr.value if type(expr) is cst.Name else None


def _reads(expr: cst.CSTNode, per_step: set[str]) -> tuple[set[str], set[str]]:
    """Names an expression reads as data (callees excluded), and the per-iteration inputs among them:
    a loop variable read as data, or a subscript indexed by one (`u[:, t]`)."""
    reads: set[str] = set()
    inputs: set[str] = set()

    def walk(node: cst.CSTNode, indexed_by_step: bool = False) -> None:
        if type(node) is cst.Name:
            reads.add(node.value)
            if node.value in per_step:
                inputs.add(node.value)
            return
        if type(node) is cst.Attribute:
            walk(node.value)
            return
        if type(node) is cst.Call:
            if type(node.func) is cst.Attribute:
                walk(node.func.value)  # `h.mul(x)`: the receiver is data; `cell(...)`: the callee is not
            for arg in node.args:
                walk(arg.value)
            return
        if type(node) is cst.Subscript:
            walk(node.value)
            for element in node.slice:
                walk(element)
            return
        for child in children(node):
            walk(child)

    walk(expr)
    return reads, inputs


def _dependencies(name: str, assigned: dict[str, list[cst.BaseExpression]], per_step: set[str]):
    """What `name`'s new value reads, through the names the same loop body binds, and the per-step inputs."""
    reads: set[str] = set()
    inputs: set[str] = set()
    pending, done = [name], set()
    while pending:
        current = pending.pop()
        if current in done:
            continue
        done.add(current)
        for value in assigned.get(current, []):
            found, step_inputs = _reads(value, per_step)
            reads |= found
            inputs |= step_inputs
            pending.extend(n for n in found if n in assigned and n not in per_step)
    return reads, inputs


def _iterates_callables(loop: Union[cst.For, cst.While], per_step: set[str]) -> bool:
    """The loop calls what it iterates over: `layer(x)` or `self.layers[i](x)` with a loop variable."""
    for node in walk_scope_of(loop.body):
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Name and func.value in per_step:
                return True
            if type(func) is cst.Subscript and any(
                type(e.slice) is cst.Index and type(e.slice.value) is cst.Name and e.slice.value.value in per_step
                for e in func.slice
            ):
                return True
    return False


def _loop_head(loop: Union[cst.For, cst.While]) -> str:
    if type(loop) is cst.For:
        return f"for {code_of(loop.target, 20)} in ..."
    return f"while {code_of(loop.test, 30)}"
