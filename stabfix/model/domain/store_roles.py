"""What one store into a long-lived container says about it: whether it adds an entry per call or per
new key (`grows`), runs once at construction (`in_setup`), in a hook (`in_hook`) or a data pipeline
(`in_data_pipeline`), in a loop over a model's parameters (`iterates_parameters`), recomputes the entry
it replaces (`recomputes_own_entry`), and whether the stores build a result to hand over rather than a
cache (`built_once`). `StoreRoles` is mixed into `ContainerRoles`, the query half of the `containers` part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from stabfix.model.calls.devices import DeviceKinds, method_chain
from stabfix.model.domain.container_uses import ContainerUse, LocalBindings, Store, reads_entry
from stabfix.model.flow.values import METADATA_STEPS, PARAMETER_ITERATORS
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.origins import passed_argument
from stabfix.model.source.project_view import ProjectQueries
from stabfix.model.source.syntax import contains, names_in, preorder, walk
from stabfix.model.training.structure import StepIndex


class StoreRoles:
    """Questions about the recorded stores (ask them after the traversal)."""

    # recorded by `Containers` (see there)
    names: Names
    steps: StepIndex
    module: cst.Module | None
    hook_names: set[str]
    project: ProjectQueries | None
    calls: list[cst.Call]

    if TYPE_CHECKING:

        def facts(self, scope: cst.FunctionDef | cst.Module) -> LocalBindings: ...

        def qualified_name(self, node: cst.BaseExpression) -> str | None: ...

        def handed_over(self, uses: list[ContainerUse]) -> bool: ...

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
        if _keyed_by_device(facts, key, self._devices()):  # type: ignore[arg-type]
            return False  # a per-device memo is meant to live on each device
        if _keyed_by_shape(facts, key):  # type: ignore[arg-type]
            return False  # one entry per input geometry (`(x.shape[-2], x.shape[-1])`): a bounded table memo
        if names & store.comprehension_names:
            return True
        constant = self._returns_a_constant
        if not store.functions:
            return any(name in facts.loop_iters or _bound_to_data(facts, name, 0, constant) for name in names)
        for name in names - {"self", "cls"}:
            if name in facts.params and self._always_passed_a_constant(store.functions[-1], name):
                continue  # `self._put(("last", 224), x)`: every call of the file passes the same key
            if name in facts.params or name in facts.loop_iters or _bound_to_data(facts, name, 0, constant):
                return True
        return False

    def _devices(self) -> DeviceKinds:
        kinds = self.__dict__.get("_device_kinds")
        if kinds is None:
            kinds = self.__dict__["_device_kinds"] = DeviceKinds(self.names)
        return kinds

    def _always_passed_a_constant(self, function: cst.FunctionDef, parameter: str) -> bool:
        """Every call of the file that runs `function` passes a literal for `parameter`, or a local of the
        caller bound only to literals; False when nothing in the file calls it (its callers are unseen)."""
        calls = [call for call in self.calls if self.names.definition_of(call) is function]
        for call in calls:
            passed = passed_argument(function, call, parameter)
            if passed is None:
                return False
            if _is_literal(passed) and not names_in(passed):
                continue
            use = self.names.uses.get(passed) if type(passed) is cst.Name else None
            caller = use.scope.node if use is not None else None
            if type(caller) not in (cst.FunctionDef, cst.Module) or passed.value not in self.facts(caller).bindings \
                    or _bound_to_data(self.facts(caller), passed.value, 0, self._returns_a_constant):  # type: ignore[union-attr]
                return False
        return bool(calls)

    def _returns_a_constant(self, value: cst.BaseExpression) -> bool:
        """A call of a function of the file that takes no data and returns only literals (`key = slot()`
        with `def slot(): return ("last", 224)`): the same value on every call."""
        if type(value) is not cst.Call or value.args:
            return False
        function = self.names.definition_of(value) or method_of_instance(self.names, value)
        if function is None:  # a function of another scanned file (`from .keys import slot`), by its own names
            qualified = self.qualified_name(value.func)
            return bool(self.project is not None and qualified and self.project.foreign(
                qualified, _returns_only_literals, needs=("names",), kinds=("def",)))
        return _only_literals(self.names.returns.get(function, []))

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
        if type(owner) is cst.ClassDef:
            for base in owner.bases:
                name = self.qualified_name(base.value) or dotted_name(base.value) or ""
                if name.rsplit(".", 1)[-1].endswith("Dataset"):
                    return True
        return False

    def iterates_parameters(self, store: Store) -> bool:
        """Filled in a loop over a model's parameters, buffers or modules (EMA shadows, backups)."""
        for loop in store.loops:
            if type(loop) is not cst.For:
                continue
            for node in walk(loop.iter):
                if type(node) is cst.Call and type(node.func) is cst.Attribute:
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
        if any(store.functions or any(type(loop) is not cst.For for loop in store.loops) for store in stores):
            return False
        if any(use.functions for use in uses):
            return False
        filling = {id(loop) for store in stores for loop in store.loops}

        def while_filling(use: ContainerUse) -> bool:
            return any(id(parent) in filling for parent in use.parents)

        looked_at = [use for use in uses if use.kind not in ("empty", "store")]
        consulted = [use for use in looked_at if use.kind not in ("safe", "meta") and while_filling(use)]
        return not consulted and any(not while_filling(use) for use in looked_at)


def _keyed_by_device(facts: LocalBindings, key: cst.BaseExpression, devices: DeviceKinds) -> bool:
    """The key holds a device, itself or through a local tuple or f-string it is bound to (`k = (n, x.device)`):
    by its value, whatever it is called (`DeviceKinds.holds_a_device`: a tensor's `.device`, a name bound to
    one or that its function moves tensors to), or a device index torch reads (`x.get_device()`,
    `torch.cuda.current_device()`)."""
    parts = [key] + [
        binding.value
        for name in names_in(key)
        for binding in facts.bindings.get(name, [])
        if type(binding.value) in (cst.Tuple, cst.FormattedString)
    ]
    return any(_holds_a_device(node, devices) for part in parts for node in preorder(part))


def _holds_a_device(node: cst.CSTNode, devices: DeviceKinds) -> bool:
    if type(node) is cst.Call:
        if type(node.func) is cst.Attribute and node.func.attr.value == "get_device" and not node.args:
            return True
        if devices.names.qualify(node.func) == "torch.cuda.current_device":
            return True
    return type(node) in (cst.Name, cst.Attribute, cst.Call) and devices.holds_a_device(node)


def _keyed_by_shape(facts: LocalBindings, key: cst.BaseExpression) -> bool:
    """The key is made only of tensor metadata (`x.shape[-1]`, `(h, w)` read off `x.shape`), itself or
    through a local it is bound to once: it takes one value per input geometry, not per sample."""
    if type(key) is cst.Name:
        bindings = facts.bindings.get(key.value, [])
        if len(bindings) != 1 or bindings[0].value is None:
            return False
        key = bindings[0].value
    parts = [element.value for element in key.elements] if type(key) is cst.Tuple else [key]
    return bool(parts) and all(_is_metadata(part) for part in parts)


def _is_metadata(expr: cst.BaseExpression) -> bool:
    _, steps = method_chain(expr)
    return any(step in METADATA_STEPS for step, _ in steps)


def _bound_to_data(facts: LocalBindings, name: str, depth: int = 0, constant=None) -> bool:
    """Bound to something other than a literal: the key can differ from call to call. A tuple or an
    f-string built from such names (`key = (image_id, scale)`, `key = f"{path}:{size}"`) is data too.
    `constant(value)`: a value that is the same on every call although no literal (a call of the file's
    own function that returns one)."""
    bindings = facts.bindings.get(name, [])
    return bool(bindings) and not all(
        b.value is not None and (
            (_is_literal(b.value) and not _built_from_data(facts, b.value, depth))
            or (constant is not None and constant(b.value))
        )
        for b in bindings
    )


def _built_from_data(facts: LocalBindings, value: cst.BaseExpression, depth: int) -> bool:
    """A tuple display or f-string holding an argument, a loop variable or a local bound to data."""
    if depth > 4 or type(value) not in (cst.Tuple, cst.FormattedString):
        return False
    return any(
        name in facts.params or name in facts.loop_iters or _bound_to_data(facts, name, depth + 1)
        for name in names_in(value) - {"self", "cls", "True", "False", "None"}
    )


def _only_literals(returned: list) -> bool:
    return bool(returned) and all(item is not None and _is_literal(item) and not names_in(item) for item in returned)


def _returns_only_literals(definition) -> bool:
    """Node-free: a function of another file that returns only literals."""
    names = definition.model.names
    return names is not None and _only_literals(names.returns.get(definition.node, []))


def _is_literal(node: cst.BaseExpression) -> bool:
    return type(node) in (
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
        ) or (type(node) is cst.Name and node.value in ("True", "False", "None"))


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
