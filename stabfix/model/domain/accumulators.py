"""Parameter-sized accumulators: buffers shaped like a model's parameters that code sums into.

`accumulators(events, names)` looks at every in-place add the `events` part records (`acc.add_(g)`,
`acc += g`, `acc.sub_(g)`, `acc -= g`) and finds the allocation of the tensor it adds into, when that
is a fresh parameter-sized buffer (`parameters.param_sized_allocation`): the tensor itself
(`acc = torch.zeros_like(w)`), or an element of a list or dict of such buffers held in a local
(`X_sum = [torch.zeros_like(p) for p in params]`, `{n: torch.zeros_like(p) for n, p in
model.named_parameters()}`, `grads = {}` filled by `grads[n] = torch.zeros_like(p)` or
`.append(...)`), drawn by `for acc, p in zip(X_sum, params)`, `for g in grads.values()`, `grads[n]`.

For each such holder it answers what the rest of its function does with it:
- `passes`: the loops around an add that repeat it (not the loop over the buffers themselves) and
  that the allocation sits outside of: the sum runs across many passes;
- `decayed`: it is also scaled in place (`mul_`, `lerp_`, `*=`, `_foreach_mul_`): a moving average
  or an optimizer's state, not a sum;
- `written_back`: an element is written into a parameter or a gradient (`p.grad.copy_(acc)`,
  `p.data.add_(acc)`): gradient accumulation or a hand-written optimizer, needed where the parameters are;
- `escapes`: the holder leaves the function (stored on an object, handed to a call other than
  `zip`/`enumerate`/`len`..., returned to a caller that keeps it or to no caller of the file): its
  consumer decides where it must live; `returned`: returned to same-file callers that only read it;
- `adding_calls`: calls of a function of the file that only adds into the buffers it is handed
  (`self._accumulate(sums, params)`): its adds count where it is called, and the hand-over is no escape;
- `grown`: no buffer is allocated: the local starts as nothing (`0`, `None`) and becomes parameter-sized by
  its first add or its first binding to a flat concatenation of the gradients (`grads += torch.cat([p.grad.view(-1)
  for p in model.parameters()])`, `flat_gradient`); the allocation is that concatenation;
- `partners`: the other holders it is zipped with when its sums are read (`zip(X_sum, Y_sum)`);
  `foreign_read`: it is zipped with, or its elements read next to, something that is not such a holder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Optional, Union

import libcst as cst

from stabfix.model.calls.events import Event, Events, GradWrite, ParamUpdate
from stabfix.model.flow.parameters import (
    Origin,
    ParamSized,
    parameters_origin,
    element_source,
    param_sized_allocation,
    parameter_origin,
    target_names,
)
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.node_fields import code_children, code_nodes
from stabfix.model.source.tree_index import TreeIndex

_ADDS = frozenset({"add_", "sub_", "+=", "-="})
_DECAYS = frozenset({"mul_", "lerp_", "div_", "addcmul_", "addcdiv_"})
Loop = Union[cst.For, cst.While]
_HARMLESS_CALLS = frozenset({"zip", "enumerate", "len", "iter", "list", "tuple", "reversed", "sorted", "range"})


@dataclass(eq=False)
class Accumulator:
    holder: Binding  # the binding of the local that holds the buffers (`X_sum = [...]`)
    allocation: ParamSized
    container: bool  # a list/dict of buffers (else the name is one buffer)
    adds: list[ParamUpdate] = field(default_factory=list)
    passes: list["Loop"] = field(default_factory=list)
    decayed: bool = False
    written_back: bool = False
    escapes: bool = False
    returned: bool = False  # `return X_sum` to callers of this file that only read it (report-only then)
    partners: set[int] = field(default_factory=set)  # ids of the holders of zipped partners
    foreign_read: bool = False
    # calls of a function of the file that only adds into the buffers it is handed (`self._accumulate(sums, ps)`):
    # each runs its adds where it is called
    adding_calls: list[cst.Call] = field(default_factory=list)
    grown: bool = False  # started as `0`/`None`, parameter-sized from a flat gradient concatenation on

    @property
    def start(self) -> cst.CSTNode:
        """What a loop must not contain for its passes to sum into the same buffer: the allocation, or the
        statement that starts a grown sum."""
        return self.holder.node if self.grown and self.holder.node is not None else self.allocation.call

    @property
    def name(self) -> str:
        return self.holder.name


def accumulators(events: Events, names: Names, tree: Optional[TreeIndex] = None) -> list[Accumulator]:
    """Every parameter-sized buffer of a function that an in-place add sums into, in source order."""
    found: dict[int, Accumulator] = {}
    for event in events.of_kind("update"):
        assert isinstance(event, ParamUpdate)
        if event.operation not in _ADDS or event.tensor is None:
            continue
        held = holder_of(event.tensor, names, event.site.loops)
        if held is None:
            grown = _grown_sum(event, names)
            if grown is not None:
                binding, allocation = grown
                accumulator = found.setdefault(id(binding), Accumulator(binding, allocation, False, grown=True))
                accumulator.adds.append(event)
                continue
            for call, held in _handed_in(event, names):
                binding, allocation, container = held
                accumulator = found.setdefault(id(binding), Accumulator(binding, allocation, container))
                accumulator.adds.append(event)
                accumulator.adding_calls.append(call)
            continue
        binding, allocation, container = held
        accumulator = found.setdefault(id(binding), Accumulator(binding, allocation, container))
        accumulator.adds.append(event)
    result = sorted(found.values(), key=lambda a: a.holder.order)
    call_parents: Optional[dict[int, list[Optional[cst.CSTNode]]]] = None
    aliased_parents: Optional[dict[int, list[Optional[cst.CSTNode]]]] = None
    writes = events.of_kind("update", "grad_write")
    writes_within: dict[int, list[Event]] = {}  # id(function) -> the writes in it (nested functions too)
    for event in writes:
        for function in event.site.functions:
            writes_within.setdefault(id(function), []).append(event)
    for accumulator in result:
        scope = accumulator.holder.scope.node
        # a function's local is seen only inside that function: its writes are the ones to look at
        nearby = writes_within.get(id(scope), []) if type(scope) is cst.FunctionDef else writes
        _describe_uses(accumulator, nearby, names, found)
        if accumulator.returned:
            function = accumulator.holder.scope.node
            if type(function) is not cst.FunctionDef:
                parents: list[Optional[cst.CSTNode]] = []
            elif tree is not None and tree.module is not None:
                # the traversal's calls (each resolved once for every part that asks) and parents
                parents = [tree.parent(call) for call in names.calls_running(function, tree.calls)]
                if aliased_parents is None:  # one pass over the calls for all returned holders
                    aliased_parents = _parents_of_aliased_calls(tree.calls, tree.parent, names)
                parents += aliased_parents.get(id(function), [])
            else:
                if call_parents is None:  # one walk of the module for all returned holders, not one each
                    call_parents = _parents_of_calls(names)
                parents = call_parents.get(id(function), [])
            if not _callers_only_read(parents):
                accumulator.escapes = True
    return result


_VIEWS = frozenset({"view", "reshape", "flatten", "ravel", "detach", "clone", "contiguous", "float", "double", "to",
                    "cuda", "cpu"})
_CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.hstack"})


def flat_gradient(expr: cst.BaseExpression, names: Names) -> Optional[ParamSized]:
    """`torch.cat([p.grad.view(-1) for p in model.parameters()])` (any view, filter or move around it): one flat
    tensor as large as all the gradients of the parameters it draws, as a `ParamSized` whose call is the
    concatenation (`on_host` when it or its elements are moved to the CPU)."""
    from stabfix.model.calls.devices import DeviceKinds

    devices = DeviceKinds(names)
    on_host = False
    current = expr
    while type(current) is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value in _VIEWS:
        on_host |= devices.moves_to_host(current)
        current = current.func.value
    if not (type(current) is cst.Call and (names.qualify(current.func) or "") in _CONCATENATIONS and current.args):
        return None
    elements = current.args[0].value
    if type(elements) not in (cst.ListComp, cst.GeneratorExp):
        return None
    element = elements.elt
    while (type(element) is cst.Call and type(element.func) is cst.Attribute and element.func.attr.value in _VIEWS) \
            or (type(element) is cst.Attribute and element.attr.value == "data"):
        if type(element) is cst.Attribute:  # `p.grad.data`
            element = element.value
            continue
        on_host |= devices.moves_to_host(element)
        element = element.func.value  # type: ignore[attr-defined]
    if type(element) is cst.Attribute and element.attr.value == "grad":
        origin = parameter_origin(element.value, names)
    elif type(element) is cst.Name and element.value in target_names(elements.for_in.target):
        origin = _differentiated_parameters(elements.for_in.iter, names)  # `for g in autograd.grad(loss, params)`
    else:
        return None
    return ParamSized(current, element, origin, on_host) if origin is not None else None


def _differentiated_parameters(gradients: cst.BaseExpression, names: Names) -> Optional[Origin]:
    """`torch.autograd.grad(loss, model.parameters())`, or a local every binding of which (reaching here) is one:
    the models whose parameters the gradients are taken for (one gradient per parameter, each its size)."""
    values: list[cst.BaseExpression] = [gradients]
    if type(gradients) is cst.Name and gradients in names.uses:
        values = [b.bound_value for b in names.reaching(gradients) if b.bound_value is not None]
    origins = [_gradient_inputs(value, names) for value in values]
    if not origins or any(origin is None for origin in origins):
        return None
    return Origin(models=frozenset().union(*(origin.models for origin in origins)))  # type: ignore[union-attr]


def _gradient_inputs(call: cst.BaseExpression, names: Names) -> Optional[Origin]:
    if type(call) is not cst.Call or names.qualify(call.func) != "torch.autograd.grad":
        return None
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    inputs = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "inputs"),
                  positional[1] if len(positional) > 1 else None)
    origin = parameters_origin(inputs, names) if inputs is not None else None
    return origin if origin is not None and origin.models else None  # only parameters the code shows


def _grown_sum(event: ParamUpdate, names: Names) -> Optional[tuple[Binding, ParamSized]]:
    """`grads = 0` (or `None`) then `grads += torch.cat([p.grad.view(-1) ...])`, or bound to such a concatenation
    first and added into after: the binding that starts the sum, and the concatenation that sizes it (the added
    one when the add is one). Every assignment reaching the add is a neutral start or such a concatenation."""
    tensor, node = event.tensor, event.node
    if type(tensor) is not cst.Name or type(node) is not cst.AugAssign:
        return None
    assigned = [b for b in names.reaching(tensor) if b.kind == "assign"]
    added = flat_gradient(node.value, names)
    # an in-place add keeps the receiver's shape: a fresh factory tensor the flat gradient is added into
    # (`torch.zeros(n)`) holds as much as the gradients, whatever its shape is spelled as
    starts = [b for b in assigned if _neutral(b.bound_value) or (added is not None and _fresh(b.bound_value, names))]
    sized = [flat for b in assigned if b not in starts
             for flat in [flat_gradient(b.bound_value, names) if b.bound_value is not None else None]]
    if not starts or any(flat is None for flat in sized):
        return None
    if any(_fresh(b.bound_value, names) and _on_host(b.bound_value, names) for b in starts):  # type: ignore[arg-type]
        return None  # `torch.zeros(n, device="cpu")`: the sum lives in host memory
    allocation = added or next((flat for flat in sized if flat is not None), None)
    if allocation is None:
        return None
    return min(starts, key=lambda b: b.order), allocation


_FACTORIES = frozenset({"torch.zeros", "torch.empty"})


def _fresh(value: Optional[cst.BaseExpression], names: Names) -> bool:
    """`torch.zeros(n, device=...)`: a fresh zero/empty tensor (on the CPU when the code says so, see `on_host`)."""
    return type(value) is cst.Call and (names.qualify(value.func) or "") in _FACTORIES


def _on_host(call: cst.Call, names: Names) -> bool:
    from stabfix.model.calls.devices import DeviceKinds

    devices = DeviceKinds(names)
    return any(arg.keyword is not None and arg.keyword.value == "device" and devices.is_host(arg.value)
               for arg in call.args)


def _neutral(value: Optional[cst.BaseExpression]) -> bool:
    """`0`, `0.0`, `None`: a sum that holds nothing yet."""
    if type(value) in (cst.Integer, cst.Float):
        return value.evaluated_value == 0
    return type(value) is cst.Name and value.value == "None"


def _handed_in(event: ParamUpdate, names: Names) -> list[tuple[cst.Call, tuple[Binding, ParamSized, bool]]]:
    """An add into a buffer drawn from a parameter of the function it sits in (`for s, p in zip(sums, params):
    s.add_(p.grad)` in `def _accumulate(self, sums, params)`), when that function does nothing else with the
    parameter: each call of it in the file that hands it a holder of parameter-sized buffers, with that holder."""
    tensor, functions = event.tensor, event.site.functions
    if type(tensor) is not cst.Name or not functions:
        return []
    function = functions[-1]
    loop = next((loop for loop in reversed(event.site.loops) if tensor.value in target_names(loop.target)), None)
    source = element_source(loop.target, loop.iter, tensor.value) if loop is not None else tensor
    if type(source) is not cst.Name or not any(b.kind == "param" for b in names.reaching(source)):
        return []
    parameter = source.value
    uses = [name for name in _names_in_node(function.body) if name.value == parameter]
    if loop is not None and type(loop.iter) is cst.Call:
        only_drawn = all(any(name is arg.value for arg in loop.iter.args) for name in uses)
    else:
        only_drawn = len(uses) == 1  # the add's own receiver
    if not only_drawn or _scales(function):
        return []  # the parameter is read elsewhere, or something is scaled in place: it does more than add
    found = []
    for call in _calls_of(function, names):
        argument = _argument_for(call, function, parameter)
        held = _container(argument, names) if type(argument) is cst.Name else None
        if held is not None:
            found.append((call, held))
    return found


def _scales(function: cst.FunctionDef) -> bool:
    """Something in the function is scaled in place (`mul_`, `lerp_`, `*=`): a moving average, not a sum."""
    return any(
        (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _DECAYS)
        or (type(node) is cst.AugAssign and type(node.operator) is cst.MultiplyAssign)
        for node in code_nodes(function.body)
    )


def _calls_of(function: cst.FunctionDef, names: Names) -> list[cst.Call]:
    module = names.module_scope.node if names.module_scope is not None else None
    if module is None:
        return []
    return [node for node in code_nodes(module) if type(node) is cst.Call and names.definition_of(node) is function]


def _argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str) -> Optional[cst.BaseExpression]:
    params = [p.name.value for p in function.params.params]
    if params and params[0] in ("self", "cls") and type(call.func) is cst.Attribute:
        params = params[1:]
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == parameter:
                return arg.value
        elif index < len(params) and params[index] == parameter:
            return arg.value
    return None


def _parents_of_calls(names: Names) -> dict[int, list[Optional[cst.CSTNode]]]:
    """id(function of this file) -> the parent of every call that runs it (`Names.definition_of`)."""
    module = names.module_scope.node if names.module_scope is not None else None
    found: dict[int, list[Optional[cst.CSTNode]]] = {}
    if module is None:
        return found
    for node, parent, _, _ in _walk_with_parent(module):
        if type(node) is cst.Call:
            function = names.definition_of(node)
            for runs in ([function] if function is not None else _aliased_functions(node, names)):
                found.setdefault(id(runs), []).append(parent)
    return found


def _parents_of_aliased_calls(calls, parent_of, names: Names) -> dict[int, list[Optional[cst.CSTNode]]]:
    """id(function of this file) -> the parent of every call that runs it through a local alias
    (`_aliased_functions`), from the traversal's calls."""
    found: dict[int, list[Optional[cst.CSTNode]]] = {}
    for call in calls:
        if type(call.func) is cst.Name and names.definition_of(call) is None:
            for runs in _aliased_functions(call, names):
                found.setdefault(id(runs), []).append(parent_of(call))
    return found


def _aliased_functions(call: cst.Call, names: Names) -> list[cst.FunctionDef]:
    """`score(...)` where every binding of `score` reaching the call is a function of the file (`score =
    gradient_importance` in one branch, `score = uniform_importance` in another): the call runs one of them."""
    func = call.func
    if type(func) is not cst.Name or func not in names.uses:
        return []
    functions = []
    for binding in names.reaching(func):
        value = binding.bound_value
        if binding.kind != "assign" or type(value) is not cst.Name or value not in names.uses:
            return []
        defs = [b.node for b in names.bindings_of(value)]
        if not defs or not all(type(d) is cst.FunctionDef for d in defs):
            return []
        functions.append(defs[-1])
    return functions  # type: ignore[return-value]


def _callers_only_read(parents: list[Optional[cst.CSTNode]]) -> bool:
    """Whether a function's result has callers in this file (`parents`: the parent of each call that runs
    it) and each only reads it (iterates it, hands it to a call, binds it to a local); one that stores it on
    an object or returns it keeps it as state."""
    for parent in parents:
        if type(parent) in (cst.Return, cst.Yield) or (
            type(parent) in (cst.Assign, cst.AnnAssign) and type(_target(parent)) is not cst.Name
        ):
            return False
    return bool(parents)


def _target(statement: cst.CSTNode) -> Optional[cst.BaseExpression]:
    if type(statement) is cst.Assign:
        return statement.targets[0].target if len(statement.targets) == 1 else None
    return statement.target if type(statement) is cst.AnnAssign else None


def holder_of(
    tensor: cst.BaseExpression, names: Names, loops: tuple[Union[cst.For, cst.While], ...] = ()
) -> Optional[tuple[Binding, ParamSized, bool]]:
    """The local holding the parameter-sized buffer `tensor` is (an element of), with its allocation;
    `loops` are the `for` loops around the use, innermost last (their targets bind before anything else)."""
    if type(tensor) is cst.Subscript:
        return _container(tensor.value, names)
    if type(tensor) is not cst.Name:
        return None
    candidates = list(reversed(names.reaching(tensor) or names.bindings_of(tensor)))
    binder = next(
        (loop for loop in reversed(loops) if type(loop) is cst.For and tensor.value in target_names(loop.target)), None
    )
    if binder is not None:
        candidates = [b for b in names.bindings_of(tensor) if b.node is binder]
    for binding in candidates:
        value = binding.bound_value
        if binding.kind == "assign" and value is not None:
            allocation = param_sized_allocation(value, names)
            if allocation is not None:
                return binding, allocation, False
        if binding.kind == "for" and type(binding.node) in (cst.For, cst.CompFor) and binding.value is not None:
            source = element_source(binding.node.target, binding.value, tensor.value)
            if type(source) is cst.Call and type(source.func) is cst.Attribute and source.func.attr.value in ("values", "items"):
                source = source.func.value
            held = _container(source, names)
            if held is not None:
                return held
    return None


def _container(expr: cst.BaseExpression, names: Names) -> Optional[tuple[Binding, ParamSized, bool]]:
    if type(expr) is not cst.Name:
        return None
    for binding in reversed(names.reaching(expr) or names.bindings_of(expr)):
        value = binding.bound_value
        if binding.kind != "assign" or value is None:
            continue
        allocation = _element_allocation(value, names)
        if allocation is None and _is_empty_collection(value) and binding.scope.is_function:
            allocation = _filled_with(binding, names)
        if allocation is not None:
            return binding, allocation, True
    return None


def _element_allocation(value: cst.BaseExpression, names: Names) -> Optional[ParamSized]:
    if type(value) in (cst.ListComp, cst.GeneratorExp):
        return param_sized_allocation(value.elt, names)
    if type(value) is cst.DictComp:
        return param_sized_allocation(value.value, names)
    if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in ("list", "tuple", "dict") and len(value.args) == 1:
        return _element_allocation(value.args[0].value, names)
    return None


def _is_empty_collection(value: cst.BaseExpression) -> bool:
    if type(value) in (cst.List, cst.Dict):
        return not value.elements
    return type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in ("list", "dict") and not value.args


@lru_cache(maxsize=256)  # asked again for every name `_refers_to` looks at; a walk of the function each time
def _filled_with(binding: Binding, names: Names) -> Optional[ParamSized]:
    """`grads = {}` then `grads[n] = torch.zeros_like(p)` / `grads.append(torch.zeros_like(p))` in its function."""
    for node in code_nodes(binding.scope.node):
        value: Optional[cst.BaseExpression] = None
        if type(node) is cst.Assign and len(node.targets) == 1:
            target = node.targets[0].target
            if type(target) is cst.Subscript and type(target.value) is cst.Name and target.value.value == binding.name:
                value = node.value
        elif (
            type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "append"
            and type(node.func.value) is cst.Name and node.func.value.value == binding.name and len(node.args) == 1
        ):
            value = node.args[0].value
        if value is not None:
            allocation = param_sized_allocation(value, names)
            if allocation is not None:
                return allocation
    return None


def _describe_uses(accumulator: Accumulator, writes: list[Event], names: Names, found: dict[int, Accumulator]) -> None:
    """`writes`: the update and gradient-write events that may touch the holder, in order."""
    function = accumulator.holder.scope.node
    adds = {id(add.node): add for add in accumulator.adds}
    in_adds = {id(node) for add in accumulator.adds for node in code_nodes(add.node)}
    for event in writes:
        if isinstance(event, ParamUpdate) and event in accumulator.adds:
            continue
        target = event.tensor if isinstance(event, (ParamUpdate, GradWrite)) else None
        if target is not None and _refers_to(target, accumulator, names, event.site.loops):
            if isinstance(event, ParamUpdate) and event.operation not in _ADDS:
                accumulator.decayed = True  # `acc.copy_(...)`, `torch._foreach_mul_`: overwritten, not summed
            continue
        if any(_refers_to(name, accumulator, names, event.site.loops) for name in _names_in_node(event.node)):
            accumulator.written_back = True
    adding_calls = {id(call) for call in accumulator.adding_calls}
    for node, parent, grandparent, loops in _walk_with_parent(function):
        if id(node) in adds:
            _add_passes(accumulator, adds[id(node)], loops, names)
        if id(node) in adding_calls:
            _call_passes(accumulator, node, loops, names)
        kind = type(node)  # exact types (see node_fields.node_kinds): a failed isinstance with libcst's ABCs is a Python call
        if kind is cst.Call:
            if type(node.func) is cst.Attribute and node.func.attr.value in _DECAYS:
                if _refers_to(node.func.value, accumulator, names, loops) and node.func.attr.value != "div_":
                    accumulator.decayed = True
        elif kind is cst.AugAssign and type(node.operator) is cst.MultiplyAssign:
            accumulator.decayed |= _refers_to(node.target, accumulator, names, loops)
        elif kind is cst.Name and id(node) not in in_adds and _is_holder_use(node, accumulator, names):
            _classify_use(node, parent, grandparent, accumulator, names, found)


def _add_passes(accumulator: Accumulator, add: ParamUpdate, loops: tuple[Loop, ...], names: Names) -> None:
    """The loops around an add that repeat the sum: not the loop over the buffers, and not one the
    allocation sits in (then each pass sums into a fresh buffer)."""
    for loop in loops:
        over_buffers = type(loop) is cst.For and (
            _mentions_holder(loop.iter, accumulator, names) or _holds_element(loop, add, names)
        )
        if not over_buffers and not _contains(loop, accumulator.start) and loop not in accumulator.passes:
            accumulator.passes.append(loop)


def _call_passes(accumulator: Accumulator, call: cst.CSTNode, loops: tuple[Loop, ...], names: Names) -> None:
    """The loops around a call that adds into the buffers it is handed, as `_add_passes` counts them."""
    for loop in loops:
        over_buffers = type(loop) is cst.For and _mentions_holder(loop.iter, accumulator, names)
        if not over_buffers and not _contains(loop, accumulator.start) and loop not in accumulator.passes:
            accumulator.passes.append(loop)


def _classify_use(node: cst.Name, parent: Optional[cst.CSTNode], call: Optional[cst.CSTNode], accumulator: Accumulator, names: Names, found: dict[int, Accumulator]) -> None:
    if type(parent) is cst.Subscript and parent.value is node:
        accumulator.foreign_read = True  # `xs[i]` read outside the adds: with what, the code does not say
    elif type(parent) is cst.Return:
        accumulator.returned = True
    elif type(parent) is cst.Yield or type(parent) in (cst.Element, cst.DictElement):
        accumulator.escapes = True
    elif type(parent) is cst.Assign and parent.value is node:
        accumulator.escapes = True  # `self.fisher = fisher`, `out = X_sum`
    elif type(parent) is cst.Arg:
        if any(call is adding for adding in accumulator.adding_calls):
            return  # handed to a function of the file that only adds into it
        if type(call) is not cst.Call:
            accumulator.escapes = True
        elif (names.qualify(call.func) or "").startswith("torch.") and call.func is not node:
            accumulator.foreign_read = True  # `torch.dot(total, ref)`: read next to tensors of unknown place
        elif not (type(call.func) is cst.Name and call.func.value in _HARMLESS_CALLS):
            accumulator.escapes = True
        elif call.func.value == "zip":
            for arg in call.args:
                other = _container(arg.value, names) if type(arg.value) is cst.Name else None
                if other is not None and other[0] is accumulator.holder:
                    continue
                if other is not None and id(other[0]) in found:
                    accumulator.partners.add(id(other[0]))
                elif not _feeds_adds(call, accumulator):
                    accumulator.foreign_read = True


def _feeds_adds(call: cst.Call, accumulator: Accumulator) -> bool:
    """Whether this `zip(...)` is the iterable of a loop that adds into the buffers."""
    return any(any(loop.iter is call for loop in add.site.loops) for add in accumulator.adds)


def _is_holder_use(node: cst.Name, accumulator: Accumulator, names: Names) -> bool:
    return node.value == accumulator.name and any(b is accumulator.holder for b in names.reaching(node))


def _refers_to(expr: cst.BaseExpression, accumulator: Accumulator, names: Names, loops: tuple[Loop, ...] = ()) -> bool:
    while type(expr) in (cst.Attribute, cst.Subscript) and type(expr) is not cst.Name:
        if type(expr) is cst.Subscript and type(expr.value) is cst.Name:
            return _is_holder_use(expr.value, accumulator, names)
        expr = expr.value
    if type(expr) is not cst.Name:
        return False
    if _is_holder_use(expr, accumulator, names):
        return True
    held = holder_of(expr, names, loops)
    return held is not None and held[0] is accumulator.holder


def _holds_element(loop: cst.For, add: ParamUpdate, names: Names) -> bool:
    tensor = add.tensor
    return type(tensor) is cst.Name and any(b.node is loop for b in names.bindings_of(tensor))


def _mentions_holder(expr: cst.CSTNode, accumulator: Accumulator, names: Names) -> bool:
    return any(_is_holder_use(name, accumulator, names) for name in _names_in_node(expr))


def _names_in_node(node: cst.CSTNode) -> Iterator[cst.Name]:
    for child in code_nodes(node):
        if type(child) is cst.Name:
            yield child


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(node is inner for node in code_nodes(outer))



def _walk_with_parent(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode], tuple[Loop, ...]]]:
    """Nodes with their parent, grandparent and enclosing `for` loops (outermost first), skipping the
    `.attr` of attributes and argument keywords."""
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode], tuple[Loop, ...]]] = [(node, None, None, ())]
    while stack:
        current, parent, grandparent, loops = stack.pop()
        yield current, parent, grandparent, loops
        kind = type(current)  # exact types (see node_fields.node_kinds)
        if kind is cst.Attribute:
            stack.append((current.value, current, parent, loops))
            continue
        inner = loops + (current,) if kind is cst.For or kind is cst.While else loops
        keyword = current.keyword if kind is cst.Arg else None
        body = getattr(current, "body", None)
        for child in reversed(code_children(current)):
            if child is keyword and keyword is not None:
                continue
            stack.append((child, current, parent, inner if child is body else loops))
