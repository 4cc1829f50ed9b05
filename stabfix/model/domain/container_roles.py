"""What the recorded stores and uses of a long-lived container mean: whether it is long-lived at
all, a cache or a result built once and handed over, cleared, growing per step, restored from a
checkpoint, holding tensors. `ContainerRoles` is the query half of the `containers` part (the
`Containers` recorder inherits it), so the rules ask one object. What each store says is in
`store_roles.py` (`StoreRoles`, which `ContainerRoles` inherits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from stabfix.model.source import vocabulary as vocab
from stabfix.model.domain.store_roles import StoreRoles
from stabfix.model.domain.container_uses import (
    ContainerKey,
    ContainerUse,
    Load,
    LocalBindings,
    Store,
    hands_over,
    is_self,
)
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import contains, names_in, walk
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.training.structure import StepIndex
from stabfix.model.flow.values import (
    NOT_TENSOR_FUNCTIONS,
    TENSOR_FUNCTION_MODULES,
    TORCH_FROM_DATA,
    annotation_mentions_tensor,
)

# Methods that set a container up once; re-creating it empty anywhere else clears it.
SETUP_METHODS = frozenset({None, "__init__", "__post_init__"})


class ContainerRoles(StoreRoles):
    """Questions over what `Containers` recorded in the traversal (ask them after it)."""

    # recorded by `Containers` (see there)
    names: Names
    steps: StepIndex
    module: cst.Module | None
    loads: list[Load]
    hook_names: set[str]
    calls_in_loops: set[cst.Call]
    module_containers: dict[str, set[str]]
    function_containers: dict[tuple[cst.FunctionDef, str], set[str]]
    function_definitions: dict[tuple[cst.FunctionDef, str], list[cst.CSTNode]]
    class_containers: dict[cst.ClassDef, dict[str, set[str]]]
    loop_functions: dict[cst.CSTNode, tuple[cst.CSTNode, ...]]
    definition_loops: dict[int, tuple[cst.CSTNode, ...]]
    loops_with_backward: set[cst.CSTNode]
    loops_with_update: set[cst.CSTNode]

    if TYPE_CHECKING:

        def facts(self, scope: cst.FunctionDef | cst.Module) -> LocalBindings: ...

        def qualified_name(self, node: cst.BaseExpression) -> str | None: ...

        def empty_container_kind(self, value: cst.BaseExpression) -> str | None: ...

    def long_lived_kinds(self, store: Store) -> set[str]:
        """How the store's container is created empty (`dict`/`list`), or nothing if it is not a long-lived one."""
        container = store.container
        owner = container.owner
        if type(owner) is cst.ClassDef:
            return self.class_containers.get(owner, {}).get(container.name, set())
        if type(owner) is cst.FunctionDef:
            kinds = self.function_containers.get((owner, container.name), set())
            inner = store.functions[store.functions.index(owner) + 1 :]
        else:
            kinds = self.module_containers.get(container.name, set())
            inner = store.functions
        # a function binding the same name locally fills its own container, not this one
        if not kinds or any(self.facts(function).binds_locally(container.name) for function in inner):
            return set()
        if type(owner) is cst.FunctionDef and not self._outlives_a_step(store, owner):
            return set()
        return kinds

    def _outlives_a_step(self, store: Store, owner: cst.FunctionDef) -> bool:
        """A function-local container is long-lived when a training loop of the function fills it across
        iterations (it is created before the loop), or when a closure the function returns fills it."""
        definitions = self.function_definitions.get((owner, store.container.name), [])
        position = store.functions.index(owner)
        returned = self.names.returns.get(owner, [])
        if position + 1 < len(store.functions):
            closure = store.functions[position + 1]
            return any(type(value) is cst.Name and value.value == closure.name.value for value in returned)
        name = store.container.name
        if any(name in names_in(value) for value in returned):
            return False  # a result the function builds and hands back, not a cache
        for loop in store.loops:
            if owner not in self.loop_functions.get(loop, ()):
                continue
            if any(loop in self.definition_loops.get(id(definition), ()) for definition in definitions):
                continue
            if loop in self.loops_with_backward and loop in self.loops_with_update:
                return True
        return False

    def container_kind(self, uses: list[ContainerUse]) -> str | None:
        kinds = {
            self.empty_container_kind(use.payload) for use in uses if use.kind == "empty" and use.payload is not None
        }
        return kinds.pop() if len(kinds) == 1 else None

    def is_cleared(self, container: ContainerKey, uses: list[ContainerUse]) -> bool:
        if any(use.kind in ("clear", "evict") for use in uses):
            return True
        empties = [use for use in uses if use.kind == "empty"]
        rebinds = [use for use in uses if use.kind == "rebind" and use.method not in SETUP_METHODS]
        if any(not self.restores(use) for use in rebinds):
            return True  # rebuilt outside setup (pruned, replaced): the old entries are freed
        if container.owner is None:
            return len(empties) > 1 or any(use.functions or use.in_loop for use in empties)
        if type(container.owner) is cst.FunctionDef:
            return len(empties) > 1 or any(use.functions[-1] is not container.owner or use.in_loop for use in empties)
        outside = [use for use in empties if use.method not in SETUP_METHODS]
        if not outside:
            return False
        inside = [use for use in empties if use.method in SETUP_METHODS]
        return (
            bool(inside)
            or len({use.method for use in outside}) > 1
            or any(self._runs_repeatedly(container.owner, use.method) for use in outside)
        )

    def _runs_repeatedly(self, owner: cst.ClassDef, method: str | None) -> bool:
        """The file calls the method, on an instance of the class whatever it is called, inside a loop (the
        container is emptied on every pass); where the file never calls it (a framework hook, another file's
        caller, or a call outside a loop in code that may itself run per step) its name breaks the tie (`reset`,
        `on_batch_end`, `clear`)."""
        if method is None:
            return False
        calls = [call for call in self.calls if type(call.func) is cst.Attribute and call.func.attr.value == method
                 and (defined := method_of_instance(self.names, call)) is not None and defined.name.value == method
                 and self.names.enclosing_class(self.names.scopes[defined]) is owner]
        if any(call in self.calls_in_loops for call in calls):
            return True
        return any(word in method.lower() for word in vocab.PER_STEP_METHOD_WORDS)  # tie-break: callers not shown

    def restores(self, use: ContainerUse) -> bool:
        """A re-binding of the container to loaded data (`self._cache = torch.load(p)`), not a reset."""
        payload = use.payload
        if payload is None:
            return False
        if any(contains(payload, load.call) for load in self.loads):
            return True
        scope = use.functions[-1] if use.functions else self.module
        if scope is None:
            return False
        facts = self.facts(scope)
        for name in names_in(payload):
            for binding in facts.bindings.get(name, []):
                if binding.value is not None and any(contains(binding.value, load.call) for load in self.loads):
                    return True
        return (
            type(payload) is cst.Call and type(payload.func) is cst.Attribute and is_self(payload.func.value)
        )

    def holds_tensors(self, uses: list[ContainerUse]) -> bool:
        for use in uses:
            if use.kind == "empty":
                statement = use.parents[-1]
                if type(statement) is cst.AnnAssign and annotation_mentions_tensor(statement.annotation):
                    return True
            if use.kind == "read" and type(use.rewrite) is cst.Call:
                return True  # read as `c[key].clone()`
            if use.kind == "read" and self._operand_of_tensor_function(use):
                return True  # read into `torch.cat([c[k] for k in keys])`
        return False

    def _operand_of_tensor_function(self, use: ContainerUse) -> bool:
        """`torch.stack([c[k] for k in ks])`, `F.normalize(c[k])`: the entry read is an operand of a torch
        function that takes tensors, so the container holds tensors."""
        child: cst.CSTNode = use.node
        for parent in reversed(use.parents):
            if type(parent) is cst.Call:
                name = self.qualified_name(parent.func) or ""
                module, _, last = name.rpartition(".")
                return (
                    any(arg is child for arg in parent.args)
                    and module in TENSOR_FUNCTION_MODULES
                    and last[:1].islower()
                    and last not in NOT_TENSOR_FUNCTIONS
                    and last not in TORCH_FROM_DATA
                )
            if type(parent) is cst.Subscript and parent.value is child:
                child = parent
            elif type(parent) in (cst.ListComp, cst.GeneratorExp) and parent.elt is child:
                child = parent
            elif type(parent) in (cst.List, cst.Tuple, cst.Element, cst.Arg):
                child = parent
            else:
                return False
        return False

    def handed_over(self, uses: list[ContainerUse]) -> bool:
        """The container itself is saved, loaded into a model or returned somewhere."""
        return any(hands_over(use.node, use.parents, self.qualified_name) for use in uses)

    def restoring_loads(self, container: ContainerKey, uses: list[ContainerUse]) -> list[Load]:
        """`torch.load` calls whose result fills this container: assigned to / merged into it, its entries
        stored into it (directly or through a method that stores into it), or returned by a method the
        container is assigned from."""
        storing_methods = {use.method for use in uses if use.kind in ("store", "nested-store") and use.method}
        restored: list[Load] = []
        for load in self.loads:
            if type(container.owner) is cst.FunctionDef:
                if container.owner not in load.functions:
                    continue
            elif load.owner is not container.owner:
                continue
            if self._load_fills(load, container, uses, storing_methods):
                restored.append(load)
        return restored

    def _load_fills(
        self, load: Load, container: ContainerKey, uses: list[ContainerUse], storing_methods: set[str]
    ) -> bool:
        scope: cst.FunctionDef | cst.Module | None = load.functions[-1] if load.functions else self.module
        if scope is None:
            return False
        facts = self.facts(scope)
        loaded = {
            name
            for name, bindings in facts.bindings.items()
            if any(b.value is not None and contains(b.value, load.call) for b in bindings)
        }
        derived = {
            name
            for name, iterable in facts.loop_iters.items()
            if contains(iterable, load.call) or names_in(iterable) & loaded
        }
        sources = loaded | derived

        def carries(node: cst.CSTNode | None) -> bool:
            return node is not None and (contains(node, load.call) or bool(names_in(node) & sources))

        for use in uses:
            in_scope = (use.functions[-1] if use.functions else self.module) is scope
            if in_scope and use.kind in ("store", "rebind", "empty") and carries(use.payload):
                return True
        finder = _MethodCalls(container.on_self)
        visit_readonly(scope, finder)
        for name, call in finder.calls:
            if name in storing_methods and any(carries(arg.value) for arg in call.args):
                return True
        # a `load_cache()`-like method returning the loaded data that the container is assigned from
        if type(scope) is cst.FunctionDef and _returns_any(scope, load.call, sources):
            for use in uses:
                if use.kind in ("rebind", "store") and use.payload is not None:
                    for call in walk(use.payload):
                        if type(call) is cst.Call and _called_name(call.func) == scope.name.value:
                            return True
        return False


def _called_name(func: cst.BaseExpression) -> str | None:
    if type(func) is cst.Name:
        return func.value
    if type(func) is cst.Attribute:
        return func.attr.value
    return None


def _returns_any(function: cst.FunctionDef, call: cst.Call, names: set[str]) -> bool:
    for node in walk(function.body):
        if type(node) is cst.Return and node.value is not None:
            if contains(node.value, call) or names_in(node.value) & names:
                return True
    return False


class _MethodCalls(cst.CSTVisitor):
    """Calls of `self.m(...)` (or of module functions `m(...)`) in one function."""

    def __init__(self, on_self: bool) -> None:
        super().__init__()
        self.on_self = on_self
        self.calls: list[tuple[str, cst.Call]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.on_self and type(func) is cst.Attribute and is_self(func.value):
            self.calls.append((func.attr.value, node))
        elif not self.on_self and type(func) is cst.Name:
            self.calls.append((func.value, node))

