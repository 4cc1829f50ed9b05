"""Carried state: values a training loop (or a step method) feeds back into the next iteration.

`out, h = model(x, h)` inside a loop that runs `backward()` every iteration carries `h`, and with
it the autograd graph of every earlier iteration, into the next one, unless the loop cuts it
(`h = h.detach()`, `h.detach_()`, a same-file `repackage_hidden(h)` that detaches, or a fresh
`h = model.init_hidden()` each iteration). The same holds for `self.h` in a step method:
`out, self.h = self.rnn(x, self.h)` runs once per step. A tuple or list state (an LSTM's `(h, c)`)
is cut just as well element by element in place: `h[0].detach_()` and `h[1].detach_()`, or
`for t in h: t.detach_()`. A helper of this file or of another scanned file cuts it just as well
(`repackage(h)` running `h.detach_()`, `h, c = detached(h, c)` returning detached values): the
`summaries` part says what a call detaches in place and returns. The model's `carried` part records the loops during the traversal (a
`self` attribute's class comes from `names`) and answers afterwards:

- `carried()`: one `CarriedState` per name or `self` attribute that a call inside a loop (or a
  step method) takes as an argument and re-binds from its result, on a path with a backward pass in
  the same loop body (or method), that nothing in the loop or class detaches or resets; with whether
  the code shows the state to be a tuple or list (then `h.detach()` would fail on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol, Union

import libcst as cst

from stabfix.model.calls.events import Backward, Events
from stabfix.model.calls.losses import read_names
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.scopes import instance_receiver
from stabfix.model.source.node_fields import children, code_nodes, visit_readonly
from stabfix.model.source.syntax import node_code

Loop = Union[cst.For, cst.While]
_BUILTINS = frozenset({"max", "min", "sum", "abs", "round", "float", "int", "len", "list", "tuple", "dict"})
_CUTTING = frozenset({"detach", "detach_", "item", "tolist", "numpy"})
# Recurrent modules whose state is an `(h, c)` pair.
_PAIR_STATE_MODULES = frozenset({"torch.nn.LSTM", "torch.nn.LSTMCell"})
_PAIR = 2


@dataclass(frozen=True)
class CarriedState:
    name: str  # `h`, or `self.h`
    binding: Binding  # the re-binding from the call's result
    call: cst.Call  # the call that takes the state and returns its next value
    backward: Backward  # a backward pass that runs on the same iterations
    retain_graph: bool  # that backward keeps the graph (`retain_graph=True`): the usual cover-up
    is_sequence: bool = False  # the code shows a tuple or list of tensors (`(h0, c0)`, an LSTM's state)


class CallFacts(Protocol):
    """What the `summaries` part tells about a call (a layer above this one, so handed in)."""

    def detached_at(self, call: cst.Call) -> list[str]: ...

    def returned_facts(self, call: cst.Call) -> Optional[tuple]: ...


class CarriedStates(cst.BatchableCSTVisitor):
    def __init__(self, names: Names, events: Events, calls: Optional[CallFacts] = None) -> None:
        super().__init__()
        self.names = names
        self.events = events
        self.calls = calls
        self._loops: list[Loop] = []
        self._calls_within: dict[int, list[cst.Call]] = {}  # id(region) -> its calls (a class: one per attribute)
        # every call in visiting order, and where the regions the queries ask about (loop bodies, classes)
        # start and end in it: id(region) -> (first, past the last); a region's calls are then a slice,
        # not a walk of its subtree (a class is walked once per attribute it carries)
        self._calls: list[cst.Call] = []
        self._spans: dict[int, tuple[int, int]] = {}
        self._open_spans: list[int] = []

    # -- traversal ------------------------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._calls.append(node)

    def _open_span(self) -> None:
        self._open_spans.append(len(self._calls))

    def _close_span(self, region: cst.CSTNode) -> None:
        self._spans[id(region)] = (self._open_spans.pop(), len(self._calls))

    def visit_For_body(self, node: cst.For) -> None:
        self._open_span()

    def leave_For_body(self, node: cst.For) -> None:
        self._close_span(node.body)

    def visit_While_body(self, node: cst.While) -> None:
        self._open_span()

    def leave_While_body(self, node: cst.While) -> None:
        self._close_span(node.body)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._open_span()

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._close_span(original_node)

    # -- queries --------------------------------------------------------------------------------------
    def carried(self) -> list[CarriedState]:
        found: list[CarriedState] = []
        backwards = [event for event in self.events.of_kind("backward") if isinstance(event, Backward)]
        backwards_in: dict[int, list[Backward]] = {}  # id(block) -> the backward passes inside it, in order
        for event in backwards:
            for block in dict.fromkeys(id(block) for block in event.site.blocks):
                backwards_in.setdefault(block, []).append(event)
        for loop in self._loops:
            in_loop = backwards_in.get(id(loop.body), [])
            if in_loop:
                found.extend(self._in_loop(loop, in_loop[0]))
        for owner, attributes in self.names.self_attributes.items():
            for attribute, bindings in attributes.items():
                state = self._across_steps(owner, attribute, bindings, backwards)
                if state is not None:
                    found.append(state)
        return found

    # -- loops ----------------------------------------------------------------------------------------
    def _in_loop(self, loop: Loop, backward: Backward) -> list[CarriedState]:
        inside = self.names.bindings_in_block(loop.body)
        by_name: dict[str, list[Binding]] = {}
        for binding in inside:
            by_name.setdefault(binding.name, []).append(binding)
        header = read_names(loop.target) if type(loop) is cst.For else set()  # fresh every iteration
        found = []
        for name, bindings in by_name.items():
            if name in header:
                continue
            for binding in bindings:
                if binding.grad_off:
                    continue  # computed without a graph (a reset under no_grad still counts below)
                call = _feeding_call(binding, lambda expr: name in read_names(expr))
                if call is None or self._is_math(call) or any(self._cuts(other, name) for other in bindings):
                    continue
                length = self._sequence_length(name, binding.scope.bindings.get(name, []), call)
                if self._detached_in_place(loop.body, name, length):
                    continue
                found.append(CarriedState(name, binding, call, backward, _retains(backward), length is not None))
                break
        return found

    # -- step methods ---------------------------------------------------------------------------------
    def _across_steps(self, owner, attribute, bindings, backwards) -> Optional[CarriedState]:
        for binding in bindings:
            if binding.grad_off:
                continue
            receiver = _receiver(binding)  # `self`, or whatever the method calls its instance
            spelled = f"{receiver}.{attribute}"
            call = _feeding_call(binding, lambda expr: _reads_attribute(expr, attribute, receiver))
            if call is None or self._is_math(call):
                continue
            method = binding.scope.node
            backward = next((b for b in backwards if b.site.function is method), None)
            resets = [other for other in bindings if not _in_init(other)]  # `__init__` only sets the start
            if backward is None or any(self._cuts(other, attribute, on_self=_receiver(other)) for other in resets):
                continue
            length = self._sequence_length(spelled, bindings, call)
            if self._detached_in_place(owner, spelled, length):
                continue
            return CarriedState(spelled, binding, call, backward, _retains(backward), length is not None)
        return None

    # -- helpers --------------------------------------------------------------------------------------
    def _is_math(self, call: cst.Call) -> bool:
        """`torch.add(total, loss)`, `max(best, x)`: a running sum or statistic (SF103's case), not a
        model's recurrent state."""
        qualified = self.names.qualify(call.func) if type(call.func) in (cst.Name, cst.Attribute) else None
        if qualified is not None and qualified.startswith("torch."):
            return True
        return type(call.func) is cst.Name and call.func.value in _BUILTINS and qualified in (None, f"builtins.{call.func.value}")

    def _cuts(self, binding: Binding, name: str, on_self: str = "") -> bool:
        """The binding detaches the state or starts it afresh (`on_self`: the state is `<on_self>.<name>`, the
        attribute on the instance its method calls `on_self`)."""
        value = binding.bound_value if binding.bound_value is not None else binding.value
        if value is None:
            return binding.kind not in ("param", "for")
        reads = _reads_attribute(value, name, on_self) if on_self else name in read_names(value)
        if not reads:
            return True  # `h = model.init_hidden(bs)`, `h = None`: a fresh state
        return _cuts_graph(value) or self._detaching_helper(value, binding)

    def _detaching_helper(self, value: cst.BaseExpression, binding: Binding) -> bool:
        """`repackage_hidden(h)`: a function of this file whose returns detach; or any summarised function
        (a method, another file's) whose returned value (the element unpacked) is detached."""
        if type(value) is not cst.Call:
            return False
        definition = self.names.definition_of(value)
        if definition is not None and any(
                _cuts_graph(r) or _calls_itself(r, definition) for r in self.names.returns.get(definition, [])):
            return True
        returned = self.calls.returned_facts(value) if self.calls is not None else None
        if not returned:
            return False
        if binding.kind == "unpack" and len(binding.position) == 1 and binding.position[0] < len(returned):
            return returned[binding.position[0]].detached is True
        return all(facts.detached is True for facts in returned)

    def _detached_in_place(self, region: cst.CSTNode, state: str, length: Optional[int]) -> bool:
        """`h.detach_()`, or every element of a tuple state: `h[0].detach_()` and `h[1].detach_()` (all
        `length` of them; an LSTM's pair when the length is not shown), `h[i].detach_()` in a loop over
        the indices, `t.detach_()` in a loop or comprehension over `h`."""
        indices: set[int] = set()
        for call in self._calls_in(region):
            for spelled in self.calls.detached_at(call) if self.calls is not None else ():
                base, _, index = spelled.partition("[")
                element = next((arg.value for arg in call.args if _spelled(arg.value) == base), None)
                if base != state and not (element is not None and self._iterates(element, state)):
                    continue
                if not index or (base != state):
                    return True  # the whole state, or an element it loops over
                if index == "*]":
                    return True
                indices.add(int(index[:-1]))
            func = call.func
            if not (type(func) is cst.Attribute and func.attr.value == "detach_"):
                continue
            target = func.value
            if _spelled(target) == state or self._iterates(target, state):
                return True
            if type(target) is cst.Subscript and _spelled(target.value) == state and len(target.slice) == 1:
                index = target.slice[0].slice
                index = index.value if type(index) is cst.Index else None
                if type(index) is cst.Integer:
                    indices.add(int(index.value))
                elif type(index) is cst.Name:
                    return True
        return bool(indices) and indices >= set(range(length or _PAIR))

    def _iterates(self, target: cst.BaseExpression, state: str) -> bool:
        """`t` bound only by loops or comprehensions over the state (`for t in h`)."""
        if type(target) is not cst.Name:
            return False
        # a comprehension's element comes before its `for` in the source, so nothing "reaches" it there
        reaching = self.names.reaching(target) or self.names.bindings_of(target)
        return bool(reaching) and all(b.kind == "for" and b.value is not None and _spelled(b.value) == state for b in reaching)

    def _sequence_length(self, state: str, bindings: list[Binding], call: cst.Call) -> Optional[int]:
        """Whether the code shows the state to be a tuple or list: None if not, else its length (0 when not
        shown). It is bound to a tuple or list (`h = (h0, c0)`, `list(...)`, a same-file function returning
        one), unpacked (`a, b = h`), or fed to an LSTM, whose state is a pair."""
        callee = self.names.callable_of(call.func)
        if callee is not None and callee.qualified in _PAIR_STATE_MODULES:
            return _PAIR
        for binding in bindings:
            value = binding.bound_value
            length = self._displayed_length(value)
            if length is None and type(value) is cst.Call:
                callee = self.names.callable_of(value.func)
                returns = self.names.returns.get(callee.node, []) if callee is not None and callee.kind == "function" else []
                length = next((n for n in map(self._displayed_length, returns) if n is not None), None)
            if length is not None:
                return length
        scopes = {id(b.scope): b.scope for b in bindings}.values()
        for other in (b for scope in scopes for found in scope.bindings.values() for b in found):
            if other.kind == "unpack" and other.value is not None and _spells(other.value, state):
                target = other.node.targets[0].target if type(other.node) is cst.Assign else None
                return len(target.elements) if type(target) in (cst.Tuple, cst.List) else 0
        return None

    def _displayed_length(self, value: Optional[cst.BaseExpression]) -> Optional[int]:
        """`(h0, c0)` -> 2; `[...]`, `tuple(...)`, `list(...)` -> 0 (length not shown); anything else -> None."""
        if type(value) in (cst.Tuple, cst.List):
            starred = any(type(e) is cst.StarredElement for e in value.elements)
            return 0 if starred else len(value.elements)
        if type(value) is cst.ListComp:
            return 0
        if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in ("tuple", "list"):
            return 0 if self.names.qualify(value.func) in (None, f"builtins.{value.func.value}") else None
        return None

    def _calls_in(self, node: cst.CSTNode) -> list[cst.Call]:
        """The calls in a region, in visiting order (collected once per region)."""
        found = self._calls_within.get(id(node))
        if found is None and id(node) in self._spans:
            first, end = self._spans[id(node)]
            found = self._calls_within[id(node)] = self._calls[first:end]
        if found is None:
            found = self._calls_within[id(node)] = []
            stack = [node]
            while stack:
                current = stack.pop()
                if type(current) is cst.Call:
                    found.append(current)
                stack.extend(reversed(children(current)))
        return found


def _in_init(binding: Binding) -> bool:
    node = binding.scope.node
    return type(node) is cst.FunctionDef and node.name.value == "__init__"


def _feeding_call(binding: Binding, reads_state) -> Optional[cst.Call]:
    """The call whose result the binding takes and which gets the state as an argument."""
    value = binding.value if binding.kind == "unpack" else binding.bound_value
    if binding.kind not in ("assign", "unpack") or type(value) is not cst.Call:
        return None
    if any(reads_state(arg.value) for arg in value.args) and not _cuts_graph(value):
        return value
    return None


def _cuts_graph(expr: cst.CSTNode) -> bool:
    finder = _CutFinder()
    visit_readonly(expr, finder)
    return finder.found


class _CutFinder(cst.CSTVisitor):
    found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _CUTTING or node.attr.value == "data":
            self.found = True


def _calls_itself(value: cst.BaseExpression, definition: cst.FunctionDef) -> bool:
    """`return tuple(repackage_hidden(v) for v in h)`: the recursive case of a detaching helper."""
    name = definition.name.value
    return any(type(n) is cst.Name and n.value == name for n in code_nodes(value))



def _reads_attribute(expr: cst.CSTNode, attribute: str, receiver: str) -> bool:
    return any(
        type(n) is cst.Attribute and n.attr.value == attribute and type(n.value) is cst.Name and n.value.value == receiver
        for n in code_nodes(expr)
    )


def _receiver(binding: Binding) -> str:
    """What the method that makes a `self.<attr>` binding calls its instance (its first parameter; a function nested
    in the method sees the method's)."""
    scope = binding.scope
    while scope.parent is not None and not scope.parent.is_class:
        scope = scope.parent
    return instance_receiver(scope.node) if type(scope.node) is cst.FunctionDef else ""


def _spelled(node: cst.CSTNode) -> str:
    return node_code(node)


def _spells(node: cst.CSTNode, state: str) -> bool:
    """`_spelled(node) == state` for a state spelled as a name or `self.<attr>`: a plain name compares its
    identifier, and a call's text (with its parentheses) is never such a spelling; no text is rendered for either."""
    kind = type(node)
    if kind is cst.Name:
        return not node.lpar and node.value == state  # type: ignore[attr-defined]
    if kind is cst.Call and "(" not in state:
        return False
    return _spelled(node) == state




def _retains(backward: Backward) -> bool:
    call = backward.node
    if type(call) is not cst.Call:
        return False
    return any(
        arg.keyword is not None and arg.keyword.value == "retain_graph" and not (type(arg.value) is cst.Name and arg.value.value in ("False", "None"))
        for arg in call.args
    )
