"""What the recorded stores and uses of a long-lived container mean: whether it is long-lived at
all, a cache or a result built once and handed over, cleared, growing per step, restored from a
checkpoint, holding tensors. `ContainerRoles` is the query half of the `containers` part (the
`Containers` recorder inherits it), so the rules ask one object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from stabfix.model.source import vocabulary as vocab
from stabfix.model.domain.container_uses import (
    ContainerKey,
    ContainerUse,
    Load,
    LocalBindings,
    Store,
    hands_over,
    is_self,
    reads_entry,
)
from stabfix.model.calls.devices import is_device_name, method_chain
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import code_of, contains, names_in, walk
from stabfix.model.source.traversal import visit_readonly
from stabfix.model.training.structure import StepIndex
from stabfix.model.flow.values import (
    METADATA_STEPS,
    NOT_TENSOR_FUNCTIONS,
    PARAMETER_ITERATORS,
    TENSOR_FUNCTION_MODULES,
    TORCH_FROM_DATA,
    annotation_mentions_tensor,
)

# Methods that set a container up once; re-creating it empty anywhere else clears it.
SETUP_METHODS = frozenset({None, "__init__", "__post_init__"})


class ContainerRoles:
    """Questions over what `Containers` recorded in the traversal (ask them after it)."""

    # recorded by `Containers` (see there)
    names: Names
    steps: StepIndex
    module: cst.Module | None
    loads: list[Load]
    hook_names: set[str]
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
        if isinstance(owner, cst.ClassDef):
            return self.class_containers.get(owner, {}).get(container.name, set())
        if isinstance(owner, cst.FunctionDef):
            kinds = self.function_containers.get((owner, container.name), set())
            inner = store.functions[store.functions.index(owner) + 1 :]
        else:
            kinds = self.module_containers.get(container.name, set())
            inner = store.functions
        # a function binding the same name locally fills its own container, not this one
        if not kinds or any(self.facts(function).binds_locally(container.name) for function in inner):
            return set()
        if isinstance(owner, cst.FunctionDef) and not self._outlives_a_step(store, owner):
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
            return any(isinstance(value, cst.Name) and value.value == closure.name.value for value in returned)
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
        if isinstance(container.owner, cst.FunctionDef):
            return len(empties) > 1 or any(use.functions[-1] is not container.owner or use.in_loop for use in empties)
        outside = [use for use in empties if use.method not in SETUP_METHODS]
        if not outside:
            return False
        inside = [use for use in empties if use.method in SETUP_METHODS]
        return (
            bool(inside)
            or len({use.method for use in outside}) > 1
            or any(any(word in (use.method or "").lower() for word in vocab.PER_STEP_METHOD_WORDS) for use in outside)
        )

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
            isinstance(payload, cst.Call) and isinstance(payload.func, cst.Attribute) and is_self(payload.func.value)
        )

    def holds_tensors(self, uses: list[ContainerUse]) -> bool:
        for use in uses:
            if use.kind == "empty":
                statement = use.parents[-1]
                if isinstance(statement, cst.AnnAssign) and annotation_mentions_tensor(statement.annotation):
                    return True
            if use.kind == "read" and isinstance(use.rewrite, cst.Call):
                return True  # read as `c[key].clone()`
            if use.kind == "read" and self._operand_of_tensor_function(use):
                return True  # read into `torch.cat([c[k] for k in keys])`
        return False

    def _operand_of_tensor_function(self, use: ContainerUse) -> bool:
        """`torch.stack([c[k] for k in ks])`, `F.normalize(c[k])`: the entry read is an operand of a torch
        function that takes tensors, so the container holds tensors."""
        child: cst.CSTNode = use.node
        for parent in reversed(use.parents):
            if isinstance(parent, cst.Call):
                name = self.qualified_name(parent.func) or ""
                module, _, last = name.rpartition(".")
                return (
                    any(arg is child for arg in parent.args)
                    and module in TENSOR_FUNCTION_MODULES
                    and last[:1].islower()
                    and last not in NOT_TENSOR_FUNCTIONS
                    and last not in TORCH_FROM_DATA
                )
            if isinstance(parent, cst.Subscript) and parent.value is child:
                child = parent
            elif isinstance(parent, (cst.ListComp, cst.GeneratorExp)) and parent.elt is child:
                child = parent
            elif isinstance(parent, (cst.List, cst.Tuple, cst.Element, cst.Arg)):
                child = parent
            else:
                return False
        return False


    def handed_over(self, uses: list[ContainerUse]) -> bool:
        """The container itself is saved, loaded into a model or returned somewhere."""
        return any(hands_over(use.node, use.parents, self.qualified_name) for use in uses)

    # --- stores --------------------------------------------------------------------------------
    def grows(self, store: Store, kind: str) -> bool:
        """Whether the store adds an entry per call (`append` to a list) or per new key: a key derived from
        the storing function's arguments, loop variables or data (not a constant, not a device)."""
        if store.op in ("append", "insert"):
            return kind == "list"
        if kind != "dict":
            return False
        if store.op == "nested-append":
            return True
        key = store.key
        names = names_in(key) - {"True", "False", "None"} if key is not None else set()
        if not names:
            return False  # a constant key: one slot, overwritten
        facts = self.facts(store.functions[-1] if store.functions else self.module)  # type: ignore[arg-type]
        if _keyed_by_device(facts, key):  # type: ignore[arg-type]
            return False  # a per-device memo is meant to live on each device
        if _keyed_by_shape(facts, key):  # type: ignore[arg-type]
            return False  # one entry per input geometry (`(x.shape[-2], x.shape[-1])`): a bounded table memo
        if names & store.comprehension_names:
            return True
        if not store.functions:
            return any(name in facts.loop_iters or _bound_to_data(facts, name) for name in names)
        for name in names - {"self", "cls"}:
            if name in facts.params or name in facts.loop_iters or _bound_to_data(facts, name):
                return True
        return False

    def in_setup(self, store: Store) -> bool:
        """Filled in `__init__`: once at construction, not per step."""
        return bool(store.functions) and store.functions[0].name.value in ("__init__", "__post_init__")

    def in_hook(self, store: Store) -> bool:
        """Filled by a function registered as a hook (or named like one)."""
        for function in store.functions:
            name = function.name.value
            if name in self.hook_names or "hook" in name.lower():
                return True
        return False

    def in_data_pipeline(self, store: Store) -> bool:
        """Datasets cache what their (CPU) workers decode: `__getitem__`, or any method of a `*Dataset` class."""
        if any(
            function.name.value in ("__getitem__", "__getitems__", "__iter__", "__next__")
            for function in store.functions
        ):
            return True
        owner = store.container.owner
        if isinstance(owner, cst.ClassDef):
            for base in owner.bases:
                name = self.qualified_name(base.value) or dotted_name(base.value) or ""
                if name.rsplit(".", 1)[-1].endswith("Dataset"):
                    return True
        return False

    def iterates_parameters(self, store: Store) -> bool:
        """Filled in a loop over a model's parameters, buffers or modules (EMA shadows, backups)."""
        for loop in store.loops:
            if not isinstance(loop, cst.For):
                continue
            for node in walk(loop.iter):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                    if node.func.attr.value in PARAMETER_ITERATORS:
                        return True
        return False

    def recomputes_own_entry(self, store: Store, uses: list[ContainerUse]) -> bool:
        """The stored value is computed, through locals, from the entry it replaces (`old = c[k]`, `c[k] = f(old)`).

        Only a read of the same key counts: a batched memo that looks up which keys are missing
        (`k not in c`) and stores rows of the freshly computed batch adds new entries.
        """
        if store.key is None or not store.functions:
            return False
        facts = self.facts(store.functions[-1])
        entry_reads = [use.node for use in uses if reads_entry(use, store.key)]
        return bool(entry_reads) and _computed_from(store.value, facts, entry_reads)

    def built_once(self, stores: list[Store], uses: list[ContainerUse]) -> bool:
        """A result built to be handed over, not a cache: the container itself is saved, loaded into a
        model or returned (`torch.save(out, p)`, `model.load_state_dict(sd)`, `return sd`), or is a
        script's one-shot collection consumed after the loop that fills it; nothing reads an entry back
        by key, and no store runs as part of training (a conversion, merge or sampling script)."""
        if any(use.kind in ("read", "get", "lookup", "moved") for use in uses):
            return False  # consulted by key: a memo
        if any(self.steps.in_training(store.frames) for store in stores):
            return False  # filled step after step: it grows with training whatever happens to it after
        return self.handed_over(uses) or self._collected_by_script(stores, uses)

    def _collected_by_script(self, stores: list[Store], uses: list[ContainerUse]) -> bool:
        """A script's one-shot collection (`samples.append(x)` in `for _ in range(n_iter)`, then
        `torch.stack(samples)` once the loop is done): module-level code runs once, so `for` loops fill
        it to a bounded size and nothing consults it while it grows. A function could run again and
        again, and a `while` loop need not end, so either makes it a cache again."""
        if any(store.functions or any(not isinstance(loop, cst.For) for loop in store.loops) for store in stores):
            return False
        if any(use.functions for use in uses):
            return False
        filling = {id(loop) for store in stores for loop in store.loops}

        def while_filling(use: ContainerUse) -> bool:
            return any(id(parent) in filling for parent in use.parents)

        looked_at = [use for use in uses if use.kind not in ("empty", "store")]
        consulted = [use for use in looked_at if use.kind not in ("safe", "meta") and while_filling(use)]
        return not consulted and any(not while_filling(use) for use in looked_at)

    def restoring_loads(self, container: ContainerKey, uses: list[ContainerUse]) -> list[Load]:
        """`torch.load` calls whose result fills this container: assigned to / merged into it, its entries
        stored into it (directly or through a method that stores into it), or returned by a method the
        container is assigned from."""
        storing_methods = {use.method for use in uses if use.kind in ("store", "nested-store") and use.method}
        restored: list[Load] = []
        for load in self.loads:
            if isinstance(container.owner, cst.FunctionDef):
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
        if isinstance(scope, cst.FunctionDef) and _returns_any(scope, load.call, sources):
            for use in uses:
                if use.kind in ("rebind", "store") and use.payload is not None:
                    for call in walk(use.payload):
                        if isinstance(call, cst.Call) and _called_name(call.func) == scope.name.value:
                            return True
        return False


def _called_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _returns_any(function: cst.FunctionDef, call: cst.Call, names: set[str]) -> bool:
    for node in walk(function.body):
        if isinstance(node, cst.Return) and node.value is not None:
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
        if self.on_self and isinstance(func, cst.Attribute) and is_self(func.value):
            self.calls.append((func.attr.value, node))
        elif not self.on_self and isinstance(func, cst.Name):
            self.calls.append((func.value, node))


def _keyed_by_device(facts: LocalBindings, key: cst.BaseExpression) -> bool:
    """The key names a device, itself or through a local tuple it is bound to (`k = (n, x.device)`)."""
    parts = [key] + [
        binding.value
        for name in names_in(key)
        for binding in facts.bindings.get(name, [])
        if isinstance(binding.value, (cst.Tuple, cst.FormattedString))
    ]
    return any(
        any(is_device_name(name) for name in names_in(part)) or "device" in code_of(part, 200) for part in parts
    )


def _keyed_by_shape(facts: LocalBindings, key: cst.BaseExpression) -> bool:
    """The key is made only of tensor metadata (`x.shape[-1]`, `(h, w)` read off `x.shape`), itself or
    through a local it is bound to once: it takes one value per input geometry, not per sample."""
    if isinstance(key, cst.Name):
        bindings = facts.bindings.get(key.value, [])
        if len(bindings) != 1 or bindings[0].value is None:
            return False
        key = bindings[0].value
    parts = [element.value for element in key.elements] if isinstance(key, cst.Tuple) else [key]
    return bool(parts) and all(_is_metadata(part) for part in parts)


def _is_metadata(expr: cst.BaseExpression) -> bool:
    _, steps = method_chain(expr)
    return any(step in METADATA_STEPS for step, _ in steps)


def _bound_to_data(facts: LocalBindings, name: str, depth: int = 0) -> bool:
    """Bound to something other than a literal: the key can differ from call to call. A tuple or an
    f-string built from such names (`key = (image_id, scale)`, `key = f"{path}:{size}"`) is data too."""
    bindings = facts.bindings.get(name, [])
    return bool(bindings) and not all(
        b.value is not None and _is_literal(b.value) and not _built_from_data(facts, b.value, depth) for b in bindings
    )


def _built_from_data(facts: LocalBindings, value: cst.BaseExpression, depth: int) -> bool:
    """A tuple display or f-string holding an argument, a loop variable or a local bound to data."""
    if depth > 4 or not isinstance(value, (cst.Tuple, cst.FormattedString)):
        return False
    return any(
        name in facts.params or name in facts.loop_iters or _bound_to_data(facts, name, depth + 1)
        for name in names_in(value) - {"self", "cls", "True", "False", "None"}
    )


def _is_literal(node: cst.BaseExpression) -> bool:
    return isinstance(
        node,
        (
            cst.SimpleString,
            cst.ConcatenatedString,
            cst.FormattedString,
            cst.Integer,
            cst.Float,
            cst.Imaginary,
            cst.List,
            cst.Tuple,
            cst.Set,
            cst.Dict,
            cst.ListComp,
            cst.SetComp,
            cst.DictComp,
            cst.GeneratorExp,
        ),
    ) or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _computed_from(
    value: cst.BaseExpression, facts: "LocalBindings", sources: list[cst.BaseExpression], depth: int = 0
) -> bool:
    """A local in `value` whose every binding contains one of `sources`, directly or through other locals.

    Every binding, so that the memo pattern (`e = c.get(k)`, then `e = compute()` when it is
    missing, then `c[k] = e.detach()`) still counts as storing a newly computed value.
    """
    if depth > 4:
        return False
    for name in names_in(value):
        bindings = facts.bindings.get(name, [])
        if bindings and all(
            binding.value is not None
            and (
                any(contains(binding.value, source) for source in sources)
                or _computed_from(binding.value, facts, sources, depth + 1)
            )
            for binding in bindings
        ):
            return True
    return False
