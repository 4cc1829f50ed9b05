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
  `no_grad`, when the callee is a module of the file or runs on a tensor put on the accelerator),
- as a snapshot (detached, cloned, or computed under `no_grad`/`inference_mode`) - tensors stored
  *with* their graph are SF103's business and KV caches of a forward call store raw activations,
- and nothing moves it to the CPU (`.cpu()`, `.to("cpu")`, `.to(d)` with `d` only ever bound to a CPU
  device, `.numpy()`, `.item()`, `.tolist()`), neither the value nor what a loop draws it from
  (`for i, row in zip(ids, out.cpu())`).

It stays silent for caches that are cleared or evicted anywhere (`.clear()`, `.pop()`, `del`,
re-created empty outside `__init__`), filled in `__init__`, filled from parameter loops (EMA
shadows, backups), filled by forward hooks or with keys that cannot grow (constants, closure
variables, `self.*`), keyed by device, holding constant tables built by factory calls, or
holding losses/reductions (a logged history, SF103), and for results built once to be handed
over: a module-level or local container saved, loaded into a model or returned, never read back by
key, and filled by no training loop or step (conversion and merge scripts). `functools.lru_cache` memos are not
containers this rule sees (they are bounded by `maxsize` and usually hold small constant tables).

`torch.load(...)` without `map_location` is reported when its result restores such a cache: it is
assigned to / merged into the container, its entries are stored into it (directly or through a
method of the class that stores into it), or it is returned by a method whose result is.

The unsafe fix stores `v.detach().to("cpu", copy=True)` and moves every read of the container back
with `.to(device, non_blocking=True)`; it is only offered when every use of the container in the
class (or module) is understood and each read site has a device expression at hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from stabfix.model.devices import (
    CPU_METHODS,
    has_cpu_move,
    is_cpu_expression,
    is_device_name,
    method_chain,
    to_call_target,
)
from stabfix.model.containers import (
    ContainerKey,
    ContainerUse,
    Load,
    Store,
    is_self,
    reads_entry,
    self_attribute,
    stored_values,
)
from stabfix.fixes.device_moves import ReadMoves, cpu_copy, has_map_location, with_map_location
from stabfix.model.imports import dotted_name
from stabfix.model.syntax import code_of, contains, names_in, walk
from stabfix.model.scopes import ScopeBindings
from stabfix.model.values import annotation_mentions_tensor
from stabfix.checker import Checker
from stabfix.findings import Fix

_SNAPSHOT_METHODS = frozenset({"detach", "detach_", "clone"})
_TENSOR_ONLY_METHODS = frozenset({"contiguous", "unsqueeze", "requires_grad_", "softmax", "log_softmax"})
# What a tensor says about itself is plain Python data (`torch.Size`, ints, dtypes, devices), not a tensor.
_METADATA_STEPS = frozenset(
    {
        ".shape", ".ndim", ".dtype", ".device", ".layout", ".is_cuda", ".requires_grad", ".itemsize", ".nbytes",
        "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset",
        "get_device", "data_ptr", "is_contiguous", "is_floating_point", "is_complex",
    }
)
_PARAMETER_ITERATORS = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "state_dict",
        "modules",
        "named_modules",
        "children",
        "named_children",
    }
)
_PARAMETER_ATTRIBUTES = frozenset({".data", ".grad", ".weight", ".bias"})
_DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_TORCH_FROM_DATA = frozenset({"tensor", "as_tensor", "from_numpy", "Tensor", "LongTensor", "FloatTensor", "asarray"})
_TORCH_FACTORIES = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "arange",
        "range",
        "linspace",
        "logspace",
        "eye",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "randint_like",
        "tril_indices",
        "triu_indices",
        "manual_seed",
    }
)
# Namespaces whose lowercase functions return tensors (`torch.cat`, `F.normalize`); classes and
# other submodules (`torch.Generator`, `torch.autograd.profiler.record_function`) are not tensors.
_TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"})
_NOT_TENSOR_FUNCTIONS = frozenset(
    {
        "load",
        "device",
        "is_tensor",
        "is_floating_point",
        "numel",
        "no_grad",
        "inference_mode",
        "enable_grad",
        "set_grad_enabled",
        "get_default_dtype",
        "compile",
        "jit",
        "save",
        "manual_seed",
        "cuda",
        "distributed",
    }
)
_NOT_TENSOR_BUILTINS = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "len",
        "list",
        "tuple",
        "dict",
        "set",
        "sorted",
        "repr",
        "round",
        "hash",
        "id",
        "type",
    }
)
# Casts to accelerator precisions: like `.to(device)`, they say the value is a tensor headed for the
# accelerator (`.float()` is as common on the CPU, so it says nothing).
_HALF_PRECISION_CASTS = frozenset({"half", "bfloat16"})
# Reductions to one number: `loss.detach().mean()` appended per step is a history, not a cache.
_REDUCTIONS = frozenset({"mean", "sum", "norm", "max", "min", "std", "var", "prod", "amax", "amin"})
_LOSS_FUNCTIONS = frozenset(
    {"cross_entropy", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "ctc_loss"}
)
_DEVICE_BASES = ("LightningModule", "PreTrainedModel", "ModelMixin", "DiffusionPipeline")

@dataclass
class _Evidence:
    """What can be told about a stored value from the code that made it."""

    tensor: bool = False  # certainly a tensor
    snapshot: bool = False  # detached, cloned or computed without autograd
    host: bool = False  # moved to the CPU, or turned into Python values
    not_tensor: bool = False  # a literal, string, number or container display
    table: bool = False  # only factory calls: a constant table (mask, positions), not data
    parameter: bool = False  # a model parameter/gradient (EMA shadows, backups)
    scalar: bool = False  # a loss or a full reduction: history logging (SF103), not a cache entry
    call: bool = False  # result of a call of unknown type (a model output, a helper)
    placed: bool = False  # put on an accelerator or cast to half precision (`.to(device)`, `.cuda()`, `.half()`)
    forward: bool = False  # what a forward pass returns: a module called, or a callable applied to a device tensor
    tuple: bool = False  # a tuple/list display of such values (`(emb, mask)`, `(h.detach(), c.detach())`)

    @property
    def silent(self) -> bool:
        return self.host or self.not_tensor or self.table or self.parameter or self.scalar

    @staticmethod
    def merge(items: list["_Evidence"]) -> "_Evidence":
        if not items:
            return _Evidence()
        return _Evidence(
            tensor=any(e.tensor for e in items),
            snapshot=any(e.snapshot for e in items),
            host=any(e.host for e in items),
            not_tensor=all(e.not_tensor for e in items),
            table=any(e.table for e in items) and all(e.table or e.not_tensor for e in items),
            parameter=any(e.parameter for e in items),
            scalar=any(e.scalar for e in items),
            call=any(e.call for e in items),
            placed=any(e.placed for e in items),
            forward=any(e.forward for e in items),
            tuple=any(e.tuple for e in items),
        )


# ----------------------------------------------------------------------------------------------
# small syntax helpers
# ----------------------------------------------------------------------------------------------
def _names_a_loss(name: str) -> bool:
    """`mse_loss`, `cross_entropy`, `criterion`, `loss_fn`, `ContrastiveLoss`: a call computing a loss value."""
    lowered = name.lower()
    return "loss" in lowered or "criterion" in lowered or lowered in _LOSS_FUNCTIONS


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
    value: cst.BaseExpression, facts: "ScopeBindings", sources: list[cst.BaseExpression], depth: int = 0
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


# ----------------------------------------------------------------------------------------------
# the checker
# ----------------------------------------------------------------------------------------------
@dataclass
class _ContainerReport:
    """What was decided about one container: its reportable stores and whether it can be fixed."""

    key: ContainerKey
    stores: list[tuple[Store, _Evidence]] = field(default_factory=list)
    read_changes: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    unfixable: str | None = None
    uses: list[ContainerUse] = field(default_factory=list)


class DeviceResidentCache(Checker):
    code = "SF102"
    # A store is only reported as a snapshot: detached, cloned or computed with autograd off.
    tokens = ("detach", "clone", "no_grad", "inference_mode", "set_grad_enabled")

    needs = ("names", "values", "steps", "modules", "containers")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.containers = self.model.containers
        self.steps = self.model.steps
        self.modules = self.model.modules

    def facts(self, scope: cst.FunctionDef | cst.Module) -> ScopeBindings:
        return self.containers.facts(scope)


    # --- deciding -------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        # Cheap checks first: only containers with a plausible store get their uses walked.
        by_container: dict[ContainerKey, list[tuple[Store, _Evidence]]] = {}
        for store in self.containers.stores:
            kinds = self.containers.long_lived_kinds(store)
            if len(kinds) != 1:
                continue
            evidence = self._plausible_store(store, next(iter(kinds)))
            if evidence is not None:
                by_container.setdefault(store.container, []).append((store, evidence))
        if not by_container:
            return
        uses = self.containers.uses(by_container)
        reports: list[_ContainerReport] = []
        for container, candidates in by_container.items():
            report = self._decide_container(container, candidates, uses.get(container))
            if report is not None and report.stores:
                reports.append(report)
        for report in reports:
            self._emit(report)

    def _decide_container(
        self,
        container: ContainerKey,
        candidates: list[tuple[Store, _Evidence]],
        uses: list[ContainerUse] | None,
    ) -> _ContainerReport | None:
        if uses is None:
            return None
        kind = self.containers.container_kind(uses)
        if kind is None or self.containers.is_cleared(container, uses):
            return None
        if any(use.kind == "mutate" for use in uses):
            return None  # entries updated in place (`c[k].mul_(m).add_(x)`, `c[k] += x`): running state per key
        if not container.on_self and self._built_once(candidates, uses):
            return None
        report = _ContainerReport(container, uses=uses)
        tensor_hint = self.containers.holds_tensors(uses)
        for store, evidence in candidates:
            if self._confirmed(store, evidence, tensor_hint, uses):
                report.stores.append((store, evidence))
        if report.stores:
            report.unfixable = self._uncertain_entries(report, tensor_hint)
            if report.unfixable is None:
                self._plan_reads(report, kind)
        return report

    def _built_once(self, candidates: list[tuple[Store, _Evidence]], uses: list[ContainerUse]) -> bool:
        """A result built to be handed over, not a cache: the container itself is saved, loaded into a
        model or returned (`torch.save(out, p)`, `model.load_state_dict(sd)`, `return sd`), nothing reads
        an entry back by key, and no store runs as part of training (a conversion or merge script)."""
        if any(use.kind in ("read", "get", "lookup", "moved") for use in uses):
            return False  # consulted by key: a memo
        if any(self.steps.in_training(store.frames) for store, _ in candidates):
            return False  # filled step after step: it grows with training whatever happens to it after
        return self.containers.handed_over(uses)

    def _uncertain_entries(self, report: _ContainerReport, tensor_hint: bool) -> str | None:
        """Why the fix cannot rewrite the entries: tuples of tensors, or a forward output that may be a
        structure (a `ModelOutput`, a dict) rather than one tensor."""
        for store, evidence in report.stores:
            if evidence.tuple:
                return f"`{report.key.display()}` holds tuples of tensors (`{code_of(store.value, 40)}`)"
            if not (evidence.tensor or evidence.placed or tensor_hint):
                return f"`{code_of(store.value, 40)}` may return more than one tensor"
        return None

    def _plausible_store(self, store: Store, kind: str) -> _Evidence | None:
        """What the code says about the stored value, if the store can be a device-resident cache entry."""
        if not self._grows(store, kind):
            return None
        if store.functions and store.functions[0].name.value in ("__init__", "__post_init__"):
            return None  # filled once at construction, not per batch
        if self._in_hook(store) or self._iterates_parameters(store) or self._in_data_pipeline(store):
            return None
        evidence = self.evaluate(store.value, self._scope_chain(store.functions))
        if evidence.silent or not (evidence.tensor or evidence.call):
            return None
        if not (evidence.snapshot or store.grad_off):
            return None
        return evidence

    def _confirmed(self, store: Store, evidence: _Evidence, tensor_hint: bool, uses: list[ContainerUse]) -> bool:
        """With the container's uses known: the stored snapshot is certainly a tensor, and not an in-place update.

        Snapshot evidence was required before (detach/clone/no_grad): a value stored with its graph
        is SF103's concern, and a KV cache of one forward pass stores raw activations.
        """
        if any(contains(store.value, use.node) for use in uses):
            return False  # updates an entry from itself (`c[k] = torch.cat([c[k], new])`): a KV-cache step
        if store.functions and self._recomputes_own_entry(store, self.facts(store.functions[-1]), uses):
            return False  # the same, through a local: `old = c[k].clone(); c[k] = a * old + b` (a running update)
        # a snapshot of a call result put on the accelerator (`model(x).to(device)`, `.cuda()`, `.half()`):
        # what a forward pass returns, handled like a tensor
        return evidence.tensor or (evidence.call and (tensor_hint or evidence.placed or evidence.forward))

    def _recomputes_own_entry(self, store: Store, facts: ScopeBindings, uses: list[ContainerUse]) -> bool:
        """The stored value is computed, through locals, from the entry it replaces (`old = c[k]`, `c[k] = f(old)`).

        Only a read of the same key counts: a batched memo that looks up which keys are missing
        (`k not in c`) and stores rows of the freshly computed batch adds new entries.
        """
        if store.key is None:
            return False
        entry_reads = [use.node for use in uses if reads_entry(use, store.key)]
        return bool(entry_reads) and _computed_from(store.value, facts, entry_reads)

    def _grows(self, store: Store, kind: str) -> bool:
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
        if any(is_device_name(name) for name in names) or "device" in code_of(key, 200):
            return False  # a per-device memo is meant to live on each device
        if names & store.comprehension_names:
            return True
        if not store.functions:
            facts = self.facts(self.containers.module)  # type: ignore[arg-type]
            return any(name in facts.loop_iters or self._bound_to_data(facts, name) for name in names)
        facts = self.facts(store.functions[-1])
        for name in names - {"self", "cls"}:
            if name in facts.params or name in facts.loop_iters or self._bound_to_data(facts, name):
                return True
        return False

    def _bound_to_data(self, facts: ScopeBindings, name: str) -> bool:
        bindings = facts.bindings.get(name, [])
        return bool(bindings) and not all(b.value is not None and _is_literal(b.value) for b in bindings)

    def _in_hook(self, store: Store) -> bool:
        for function in store.functions:
            name = function.name.value
            if name in self.containers.hook_names or "hook" in name.lower():
                return True
        return False

    def _in_data_pipeline(self, store: Store) -> bool:
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

    def _iterates_parameters(self, store: Store) -> bool:
        for loop in store.loops:
            if not isinstance(loop, cst.For):
                continue
            for node in walk(loop.iter):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                    if node.func.attr.value in _PARAMETER_ITERATORS:
                        return True
        return False

    def _scope_chain(self, functions: tuple[cst.FunctionDef, ...]) -> list[ScopeBindings]:
        chain = [self.facts(function) for function in reversed(functions)]
        if self.containers.module is not None:
            chain.append(self.facts(self.containers.module))
        return chain

    # --- evidence about a value -------------------------------------------------------------------
    def evaluate(self, expr: cst.BaseExpression, scopes: list[ScopeBindings], depth: int = 0) -> _Evidence:
        if depth > 6:
            return _Evidence()
        root, steps = method_chain(expr, self.qualified_name)
        evidence = self._evaluate_root(root, scopes, depth)
        for name, node in steps:
            if name in _METADATA_STEPS:
                return _Evidence(not_tensor=True)  # `x.shape[1:]`, `x.size(0)`: whatever follows is metadata too
            if name in ("numpy", "item", "tolist"):
                evidence.host = evidence.not_tensor = True  # a Python/numpy value from here on
                evidence.tensor = False
            elif name in CPU_METHODS:
                evidence.host = True
            elif name == "to":
                target, where = to_call_target(node, self.qualified_name)  # type: ignore[arg-type]
                if target == "cpu" or (target == "device" and self._names_cpu_device(where, scopes)):
                    evidence.host = True
                elif target == "device":
                    evidence.host = False
                    evidence.placed = True
            elif name == "cuda":
                evidence.host = False
                evidence.placed = True
            elif name in _HALF_PRECISION_CASTS:
                evidence.placed = True
            elif name in _SNAPSHOT_METHODS:
                evidence.tensor = evidence.snapshot = True
                evidence.not_tensor = False
            elif name in _TENSOR_ONLY_METHODS:
                evidence.tensor = True
                evidence.not_tensor = False
            elif name in _PARAMETER_ATTRIBUTES:
                evidence.parameter = True
            elif name in _REDUCTIONS and not node.args:  # type: ignore[attr-defined]
                evidence.scalar = True
            elif _names_a_loss(name):
                evidence.scalar = True
            elif name == "[]":
                evidence.not_tensor = False  # an element of a list/dict: whatever was put in it
                evidence.tuple = False
            elif name.startswith("."):
                continue
            elif not evidence.tensor:
                evidence.call = True
                evidence.forward = self._is_forward(node, scopes, depth)  # type: ignore[arg-type]
        return evidence

    def _is_forward(self, call: cst.Call, scopes: list[ScopeBindings], depth: int) -> bool:
        """A forward pass: a call of a module of the file (`self.teacher(x)`, `encoder(ids)`), or of any
        callable on a tensor placed on the accelerator (`text_encoder(ids.to(device))`)."""
        if self.modules.is_module(call.func):
            return True
        return any(
            arg.keyword is None and self.evaluate(arg.value, scopes, depth + 1).placed for arg in call.args
        )

    def _names_cpu_device(
        self, expr: cst.BaseExpression | None, scopes: list[ScopeBindings], depth: int = 0
    ) -> bool:
        """`store_device` / `self.store_device` where every assignment of it is a CPU device
        (`torch.device("cpu")`, `"cpu"`): moving there is a move to the CPU, whatever the name says."""
        if expr is None or depth > 4:
            return False
        if isinstance(expr, cst.Name):
            facts = next((f for f in scopes if expr.value in f.params or expr.value in f.bindings), None)
            if facts is None or expr.value in facts.params:
                return False  # a parameter is whatever the caller passes
            values = [binding.value for binding in facts.bindings[expr.value]]
        else:
            attribute = self_attribute(expr)
            if attribute is None:
                return False
            values = self.containers.attribute_values.get(attribute, [])
        return bool(values) and all(
            value is not None
            and (is_cpu_expression(value, self.qualified_name) or self._names_cpu_device(value, scopes, depth + 1))
            for value in values
        )

    def _evaluate_root(self, root: cst.BaseExpression, scopes: list[ScopeBindings], depth: int) -> _Evidence:
        if isinstance(root, cst.Name):
            return self._evaluate_name(root.value, scopes, depth)
        if isinstance(root, (cst.Tuple, cst.List)) and root.elements:
            # `(emb, mask)`, `(h.detach(), c.detach())`: what its elements are, kept together
            if any(isinstance(element, cst.StarredElement) for element in root.elements):
                return _Evidence()
            merged = _Evidence.merge([self.evaluate(e.value, scopes, depth + 1) for e in root.elements])
            merged.tuple = merged.tensor or merged.call
            return merged
        if _is_literal(root):
            return _Evidence(not_tensor=True)
        if isinstance(root, cst.Call):
            return self._evaluate_call(root, scopes, depth)
        if isinstance(root, cst.BinaryOperation):
            return _Evidence.merge(
                [self.evaluate(root.left, scopes, depth + 1), self.evaluate(root.right, scopes, depth + 1)]
            )
        if isinstance(root, cst.UnaryOperation):
            return self.evaluate(root.expression, scopes, depth + 1)
        if isinstance(root, cst.IfExp):
            return _Evidence.merge(
                [self.evaluate(root.body, scopes, depth + 1), self.evaluate(root.orelse, scopes, depth + 1)]
            )
        return _Evidence()

    def _evaluate_name(self, name: str, scopes: list[ScopeBindings], depth: int) -> _Evidence:
        if name in ("True", "False", "None"):
            return _Evidence(not_tensor=True)
        for index, facts in enumerate(scopes):
            if name in facts.params:
                param = facts.params[name]
                return _Evidence(tensor=annotation_mentions_tensor(param.annotation))
            if name in facts.bindings:
                items: list[_Evidence] = []
                if name in facts.loop_iters and self._is_parameter_iteration(facts.loop_iters[name]):
                    return _Evidence(parameter=True)
                if self._drawn_from_loader(name, facts, depth):
                    return _Evidence(host=True)  # a batch as a DataLoader yields it: host memory
                for binding in facts.bindings[name]:
                    if binding.value is None:
                        if self._loop_element_on_host(name, binding.statement, scopes[index:], depth):
                            items.append(_Evidence(host=True))
                        continue
                    if self._reads_container(binding.value):
                        continue
                    item = self.evaluate(binding.value, scopes[index:], depth + 1)
                    if binding.grad_off:
                        item.snapshot = True
                    items.append(item)
                return _Evidence.merge(items)
        return _Evidence()

    def _loop_element_on_host(
        self, name: str, statement: cst.CSTNode, scopes: list[ScopeBindings], depth: int
    ) -> bool:
        """`for i, row in zip(ids, out.cpu())`: `row` is a row of what the loop iterates, so it is host
        memory when that is (moved to the CPU in the loop header or by an earlier statement)."""
        if not isinstance(statement, cst.For):
            return False
        source = self._loop_element_source(statement.target, statement.iter, name)
        return source is not None and self.evaluate(source, scopes, depth + 1).host

    def _loop_element_source(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression, name: str
    ) -> cst.BaseExpression | None:
        """The expression whose elements the loop target `name` takes: `out` for `row` in
        `for i, row in zip(ids, out)` or `for j, row in enumerate(out)`; None for an `enumerate` counter."""
        if isinstance(target, cst.Name):
            return iterable if target.value == name else None
        if not isinstance(target, (cst.Tuple, cst.List)) or name not in names_in(target):
            return None
        elements = [element.value for element in target.elements]
        if isinstance(iterable, cst.Call) and not any(isinstance(e, cst.StarredElement) for e in target.elements):
            function = self._builtin_called(iterable)
            positional = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
            if function == "zip" and len(positional) == len(elements) == len(iterable.args):
                pairs = list(zip(elements, positional))
            elif function == "enumerate" and len(elements) == 2 and positional:
                pairs = [(elements[1], positional[0])]
            else:
                pairs = []
            if function in ("zip", "enumerate"):
                for element, part in pairs:
                    if name in names_in(element):
                        return self._loop_element_source(element, part, name)
                return None
        return iterable  # unpacking one element (a row, a pair) of the iterable: a part of it

    def _builtin_called(self, call: cst.Call) -> str | None:
        """`zip` for `zip(...)`: a plain name that no import rebinds (builtins have no qualified name)."""
        if isinstance(call.func, cst.Name) and self.qualified_name(call.func) is None:
            return call.func.value
        return None

    def _drawn_from_loader(self, name: str, facts: ScopeBindings, depth: int) -> bool:
        """Every binding of `name` in this scope hands it (a part of) a batch as a `DataLoader` yields
        it, with no device move: `for batch in DataLoader(...)`, `x, y = batch[0], batch[1]`."""
        bindings = facts.bindings.get(name, [])
        if not bindings or name in facts.globals or name in facts.params or depth > 6:
            return False
        for binding in bindings:
            if isinstance(binding.statement, cst.For) and binding.value is None:
                if facts.loop_iters.get(name) is not binding.statement.iter:
                    return False
                if not self._is_loader(binding.statement.iter, facts):
                    return False
                continue
            value = binding.value
            while isinstance(value, cst.Subscript):
                value = value.value  # `batch[0]`, `batch["x"]`: an element of the batch
            if not (isinstance(value, cst.Name) and value.value != name):
                return False
            if not self._drawn_from_loader(value.value, facts, depth + 1):
                return False
        return True

    def _is_loader(self, iterable: cst.BaseExpression, facts: ScopeBindings) -> bool:
        """`DataLoader(...)` (also under `enumerate`), or a name this scope binds only to one."""
        if isinstance(iterable, cst.Call) and self._builtin_called(iterable) == "enumerate" and iterable.args:
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Call):
            return (self.qualified_name(iterable.func) or "") in _DATA_LOADERS
        if isinstance(iterable, cst.Name) and iterable.value not in facts.params and iterable.value not in facts.globals:
            bindings = facts.bindings.get(iterable.value, [])
            return bool(bindings) and all(
                b.value is not None and self._is_loader(b.value, facts) and not isinstance(b.value, cst.Name)
                for b in bindings
            )
        return False

    def _reads_container(self, value: cst.BaseExpression) -> bool:
        """`self._cache.get(k)`, `self._cache[k]`: a read of a container is neither evidence nor counter-evidence."""
        root, steps = method_chain(value, self.qualified_name)
        if is_self(root) and steps and steps[0][0].startswith("."):
            steps = steps[1:]  # `self._cache`, then what is done with it
        elif not (isinstance(root, cst.Name) and root.value in self.containers.module_containers):
            return False  # `self.encoder(x)[0]` indexes a method's result, not a container
        return bool(steps) and steps[0][0] in ("get", "[]", "pop", "setdefault")

    def _is_parameter_iteration(self, iterable: cst.BaseExpression) -> bool:
        return any(
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _PARAMETER_ITERATORS
            for node in walk(iterable)
        )

    def _evaluate_call(self, call: cst.Call, scopes: list[ScopeBindings], depth: int) -> _Evidence:
        name = self.qualified_name(call.func) or ""
        callee = call.func.value if isinstance(call.func, cst.Name) else ""
        if name.startswith(("numpy.", "np.")):
            return _Evidence(host=True)
        if not name and callee in _NOT_TENSOR_BUILTINS:
            return _Evidence(not_tensor=True)
        if name == "copy.deepcopy" and call.args:
            return self.evaluate(call.args[0].value, scopes, depth + 1)
        module, _, last = name.rpartition(".")
        if module == "torch" and (last in _TORCH_FROM_DATA or last in _TORCH_FACTORIES):
            return _Evidence(table=True, tensor=True)  # made from Python data or a factory: a constant table
        if module in _TENSOR_FUNCTION_MODULES and last[:1].islower() and last not in _NOT_TENSOR_FUNCTIONS:
            operands = [
                self.evaluate(element, scopes, depth + 1)
                for arg in call.args
                if arg.keyword is None
                for element in _elements(arg.value)
            ]
            merged = _Evidence.merge(operands) if operands else _Evidence()
            return _Evidence(
                tensor=True,
                scalar=_names_a_loss(last),
                snapshot=merged.snapshot,
                host=merged.host or has_cpu_move(call, self.qualified_name),
                table=merged.table,
                parameter=merged.parameter,
            )
        callee_name = dotted_name(call.func) or ""
        return _Evidence(
            call=True,
            scalar=_names_a_loss(callee_name.rsplit(".", 1)[-1]),
            forward=self._is_forward(call, scopes, depth),
        )

    # --- reads and the fix --------------------------------------------------------------------------
    def _plan_reads(self, report: _ContainerReport, kind: str) -> None:
        plan = ReadMoves(self.containers, report.key, report.uses, kind, lambda: self._other_store(report))
        report.unfixable, report.read_changes = plan.unfixable, plan.changes

    def _other_store(self, report: _ContainerReport) -> cst.BaseExpression | None:
        """A value stored into the container, besides the reported stores, that is not certainly a tensor.

        Reads are moved back with `.to(device)`: that must hold for every entry a read can return.
        """
        covered = {id(node) for store, _ in report.stores for node in (store.value, store.node)}
        for use in report.uses:
            if use.kind == "rebind" and not self.containers.restores(use):
                return use.payload
            if use.kind != "store" or use.payload is None or id(use.payload) in covered or self.containers.restores(use):
                continue  # reported stores, and restores from `torch.load`, hold tensors
            for value in stored_values(use.payload, use.node):
                if value is None:
                    return use.payload
                evidence = self.evaluate(value, self._scope_chain(use.functions))
                if not evidence.tensor or evidence.not_tensor:
                    return value  # CPU tensors are fine: `.to(device)` moves them like the others
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
                f"`{code_of(load.call, 50)}` restores `{container}` with every tensor on the device it was saved "
                "from (the accelerator), so the whole cache lands in accelerator memory at once; pass "
                '`map_location="cpu"` and keep the cache on the CPU',
                fix,
            )

    def _store_message(self, report: _ContainerReport, store: Store) -> str:
        container = report.key.display()
        root, _ = method_chain(store.value, self.qualified_name)
        stored = code_of(store.value, 60)
        where = (
            f"on the device `{root.value}` lives on"
            if isinstance(root, cst.Name) and root.value != "self"
            else "on the device it was computed on"
        )
        growth = (
            "every call adds an entry"
            if store.op in ("append", "insert")
            else (
                f"it gains an entry for every new key (`{code_of(store.key, 30)}`)"
                if store.key is not None
                else "it gains an entry for every new key"
            )
        )
        suggestion = code_of(cpu_copy(store.value, self.qualified_name), 70)
        message = (
            f"`{container}` keeps `{stored}` {where} (the accelerator): "
            f"{growth} and nothing frees them between batches, so accelerator memory grows until it runs out; "
            f"store a CPU copy (`{suggestion}`) and move entries back with `.to(device, non_blocking=True)` "
            "where they are read"
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

def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements]
    return [expr]
