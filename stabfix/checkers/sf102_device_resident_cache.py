"""SF102 device-resident-cache: a long-lived cache keeps accelerator tensors, one per new key.

What counts as a cache: a dict or list that outlives the call filling it, i.e. an attribute of
`self` created empty in the class (`self._cache = {}`), a class attribute, a module-level
container, or a function-local one that a training loop of the function (a loop calling
`.backward()`) or a closure the function returns fills across calls. A store is reported when it

- adds an entry per new key (`c[key] = v`, `c.setdefault(key, v)`, `c.update({key: v})` with a key
  derived from the storing function's arguments or loop variables) or per call (`c.append(v)`),
- stores a tensor (a `.detach()`/`.clone()` chain, a `torch` op, a parameter annotated `Tensor`,
  or a call result when the container is annotated as holding tensors, read back with `.clone()`,
  or the result is put on the accelerator with `.to(device)`/`.cuda()`/`.half()`),
- (or a tuple of such values, reported without a fix; or a forward output stored as it is under
  `no_grad`, when the callee is a module of the file, runs on a tensor put on the accelerator, or has
  its result reshaped there, `enc(ids).squeeze(0)`),
- as a snapshot (detached, cloned, or computed under `no_grad`/`inference_mode`) - tensors stored
  *with* their graph are SF103's business and KV caches of a forward call store raw activations,
- and nothing moves it to the CPU (`.cpu()`, `.to("cpu")`, `.to(d)` with `d` only ever bound to a CPU
  device, `.numpy()`, `.item()`, `.tolist()`), neither the value nor what a loop draws it from
  (`for i, row in zip(ids, out.cpu())`).

It stays silent for caches that are cleared or evicted anywhere (`.clear()`, `.pop()`, `del`,
re-created empty outside `__init__`), filled in `__init__`, filled from parameter loops (EMA
shadows, backups) or with snapshots of a tensor an optimizer trains (`Adam([latent])`), filled by forward hooks or with keys that cannot grow (constants, closure
variables, `self.*`), keyed by device, holding constant tables built by factory calls, or
holding losses/reductions (a logged history, SF103), and for results built once to be handed
over: a module-level or local container saved, loaded into a model or returned, or filled by script
code in `for` loops and consumed whole after them (a sample grid), never read back by key, and filled
by no training loop or step (conversion, merge and sampling scripts). `functools.lru_cache` memos are not
containers this rule sees (they are bounded by `maxsize` and usually hold small constant tables).

`torch.load(...)` without `map_location` is reported when its result restores such a cache: it is
assigned to / merged into the container, its entries are stored into it (directly or through a
method of the class that stores into it), or it is returned by a method whose result is.

The unsafe fix stores `v.detach().to("cpu", copy=True)` and moves every read of the container back
with `.to(device, non_blocking=True)`; it is only offered when every use of the container in the
class (or module) is understood and each read site has a device expression at hand.

The facts are the model's: which containers are such caches in `stabfix.model.domain.device_caches`, containers,
their uses and what they are for in `stabfix.model.domain.containers`, `container_uses` and `container_roles`, what a stored value is in `stabfix.model.flow.values`, training steps in `stabfix.model.training.structure`; the rewrites are
`stabfix.fixes.device_moves`. This module is the rule's decision over them and its message.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.device_moves import ReadMoves, cpu_copy, has_map_location, with_map_location
from stabfix.model.domain.container_uses import ContainerKey, ContainerUse, Load, Store
from stabfix.model.flow.values import Value
from stabfix.model.source.syntax import code_of
from stabfix.shape_queries import Shape, functions_keeping_locals, makes_empty_container, mentions_a_name, root_name


@dataclass
class _ContainerReport:
    """What was decided about one container: its reportable stores and whether it can be fixed."""

    key: ContainerKey
    stores: list[tuple[Store, Value]] = field(default_factory=list)
    read_changes: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    unfixable: str | None = None
    uses: list[ContainerUse] = field(default_factory=list)


class DeviceResidentCache(Checker):
    code = "SF102"
    # A store is only reported as a snapshot: detached, cloned or computed with autograd off.
    tokens = ("detach", "clone", "no_grad", "inference_mode", "set_grad_enabled")
    needs = ("names", "values", "steps", "modules", "containers", "device_caches")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a growing store (`c.append(v)`; `c[k] = v`... by a key that is no constant: `store_roles.grows`) into a long-lived container made empty
        stores = [(n, t.value) for n in shape.nodes(ast.Assign) for t in n.targets if type(t) is ast.Subscript and mentions_a_name(t.slice)]
        stores += [(c, c.func.value) for c in shape.calls("append", "insert", "setdefault", "update") if type(c.func) is ast.Attribute and _grows(c)]
        stored = {root_name(held) for _, held in stores} - {None}
        kept = _long_lived_containers(shape, stored) if stored else set()
        return any(root_name(held) in kept and _per_step(shape, node) for node, held in stores)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.containers = self.model.containers

    # --- deciding -------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        caches = self.model.device_caches
        reports: list[_ContainerReport] = []
        for cache in caches.found():
            report = _ContainerReport(cache.key, stores=cache.stores, uses=cache.uses)
            report.unfixable = self._uncertain_entries(report, cache.tensor_hint)
            if report.unfixable is None:
                plan = ReadMoves(self.containers, cache.key, cache.uses, cache.kind,
                                 lambda cache=cache: caches.uncertain_entry(cache))
                report.unfixable, report.read_changes = plan.unfixable, plan.changes
            reports.append(report)
        for report in reports:
            self._emit(report)

    def _uncertain_entries(self, report: _ContainerReport, tensor_hint: bool) -> str | None:
        """Why the fix cannot rewrite the entries: tuples of tensors, or a forward output that may be a
        structure (a `ModelOutput`, a dict) rather than one tensor."""
        for store, evidence in report.stores:
            if evidence.grouped:
                return f"`{report.key.display()}` holds tuples of tensors (`{code_of(store.value, 40)}`)"
            if not (evidence.tensor or evidence.placed or tensor_hint):
                return f"`{code_of(store.value, 40)}` may return more than one tensor"
        return None

    def _emit(self, report: _ContainerReport) -> None:
        container = report.key.display()
        fixable = report.unfixable is None
        for store, _evidence in report.stores:
            message = self._store_message(report, store)
            fix = None
            if fixable and not store.shared_value:
                changes: dict[cst.CSTNode, cst.CSTNode] = {store.value: cpu_copy(store.value, self.qualified_name)}
                changes.update(report.read_changes)
                fix = Fix(
                    "unsafe",
                    f"store a CPU copy in `{container}` and move entries back to the device where they are read",
                    changes,
                )
            self.report(store.node, message, fix)
        for load in self._restoring_loads(report):
            fix = (
                Fix("unsafe", 'load the cache with `map_location="cpu"`', {load.call: with_map_location(load.call)})
                if fixable
                else None
            )
            self.report(
                load.call,
                f"`{code_of(load.call, 50)}` restores `{container}` onto the accelerator it was saved from; "
                'pass `map_location="cpu"` and keep the cache on the CPU',
                fix,
            )

    def _store_message(self, report: _ContainerReport, store: Store) -> str:
        container = report.key.display()
        stored = code_of(store.value, 60)
        if store.op in ("append", "insert"):
            growth = "one more entry on every call"
        elif store.key is not None:
            growth = f"one entry per new key (`{code_of(store.key, 30)}`)"
        else:
            growth = "one entry per new key"
        if type(store.value) in (cst.Tuple, cst.List):
            suggestion = "a CPU copy of each tensor (`t.detach().to(\"cpu\", copy=True)`)"
        else:
            suggestion = f"a CPU copy (`{code_of(cpu_copy(store.value, self.qualified_name), 70)}`)"
        message = (
            f"`{container}` keeps `{stored}` in accelerator memory, {growth}, never freed; "
            f"store {suggestion} and move entries back with `.to(device, non_blocking=True)` where they are read"
        )
        if report.unfixable:
            message += f" (no automatic fix: {report.unfixable})"
        elif store.shared_value:
            message += f" (no automatic fix: `{code_of(store.value, 40)}` is also bound to another name here)"
        return message

    def _restoring_loads(self, report: _ContainerReport) -> list[Load]:
        """`torch.load` calls without map_location whose result fills this container."""
        loads = self.containers.restoring_loads(report.key, report.uses)
        return [load for load in loads if not has_map_location(load.call)]


def _long_lived_containers(shape: Shape, stored: set[str]) -> set[str]:
    """Containers made empty that may outlive a call (`long_lived_kinds`): a function's local only in `functions_keeping_locals`."""
    found: set[str] = set()
    persisting: set[int] | None = None
    for node in shape.nodes(ast.Assign, ast.AnnAssign):
        targets = node.targets if type(node) is ast.Assign else [node.target]
        if node.value is None or stored.isdisjoint(root_name(t) for t in targets) or not makes_empty_container(shape, node.value):
            continue
        function = shape.enclosing_function(node)
        if function is not None and all(type(t) is ast.Name for t in targets):
            persisting = functions_keeping_locals(shape) if persisting is None else persisting
            if id(function) not in persisting:
                continue
        found.update(root_name(target) for target in targets)
    return found & stored


def _grows(call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    if call.func.attr == "update":  # type: ignore[attr-defined]
        return type(first) is ast.DictComp or type(first) is ast.Dict and any(k is not None and mentions_a_name(k) for k in first.keys)
    return call.func.attr != "setdefault" or first is not None and mentions_a_name(first)  # type: ignore[attr-defined]


def _per_step(shape: Shape, store: ast.AST) -> bool:
    """Not filled at construction (`__init__`) nor by a hook (`store_roles.in_setup`, `in_hook`)."""
    names = [f.name for f in shape.ancestors(store) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return not (names and names[-1] in ("__init__", "__post_init__")) and not any("hook" in name.lower() for name in names)
