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

import re
from dataclasses import dataclass, field

import libcst as cst

from stabfix.model.devices import (
    CPU_METHODS,
    has_cpu_move,
    is_cpu_expression,
    is_device_name,
    is_grad_disabling_context,
    is_host_name,
    method_chain,
    to_call_target,
)
from stabfix.model.containers import hands_over
from stabfix.fixes.device_moves import cpu_copy, has_map_location, move_back, with_map_location
from stabfix.model.imports import dotted_name
from stabfix.model.syntax import contains, names_in, preorder, walk, walk_scope
from stabfix.model.modules import ModuleIndex
from stabfix.model.scopes import ScopeBinding, ScopeBindings
from stabfix.model.structure import Frame, StepIndex, visitors_with
from stabfix.checker import Checker
from stabfix.findings import Fix

_STORE_METHODS = ("append", "insert", "setdefault", "update")
_EVICT_METHODS = frozenset({"pop", "popitem", "popleft", "remove", "__delitem__"})
_HARMLESS_METHODS = frozenset({"keys", "__len__", "__contains__", "count", "index", "__iter__"})
_WHOLE_READ_METHODS = frozenset({"items", "values", "copy"})
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
# Tensor metadata that is the same wherever the tensor lives: reading it needs no move back.
_METADATA = frozenset({"shape", "dtype", "ndim", "size", "numel", "dim", "is_floating_point", "element_size"})
_HARMLESS_BUILTINS = frozenset({"len", "bool", "isinstance", "id", "type", "print", "repr", "str"})
# Classes whose instances already have a `.device` property.
_DEVICE_BASES = ("LightningModule", "PreTrainedModel", "ModelMixin", "DiffusionPipeline")
# Methods that set a container up once; re-creating it empty anywhere else clears it.
_SETUP_METHODS = frozenset({None, "__init__", "__post_init__"})
_PER_STEP_WORDS = ("step", "batch", "forward", "reset", "clear", "epoch", "flush", "invalidate", "start", "end")
_EMPTY_CONSTRUCTORS = {
    "dict": "dict",
    "list": "list",
    "collections.OrderedDict": "dict",
    "OrderedDict": "dict",
    "collections.defaultdict": "dict",
    "defaultdict": "dict",
    "collections.deque": "list",
    "deque": "list",
    "typing.OrderedDict": "dict",
}


# ----------------------------------------------------------------------------------------------
# records
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _ContainerKey:
    # a class (`self.<name>`), a function whose local container outlives one step, or None (module level)
    owner: cst.ClassDef | cst.FunctionDef | None
    name: str

    @property
    def on_self(self) -> bool:
        return isinstance(self.owner, cst.ClassDef)

    def display(self) -> str:
        if isinstance(self.owner, cst.ClassDef):
            return f"{self.owner.name.value}.{self.name}"
        return self.name


@dataclass
class _Store:
    container: _ContainerKey
    node: cst.CSTNode  # reported: the assignment statement or the store call
    value: cst.BaseExpression
    key: cst.BaseExpression | None
    op: str  # setitem, append, insert, setdefault, update, nested-append
    functions: tuple[cst.FunctionDef, ...]  # enclosing functions inside the owner, outermost first
    loops: tuple[cst.For | cst.While, ...]
    grad_off: bool
    comprehension_names: frozenset[str] = frozenset()
    shared_value: bool = False  # `c[k] = v = t.detach()`: the stored value is also bound elsewhere
    frames: tuple[Frame, ...] = ()  # where the store sits in the training structure of the file


@dataclass
class _Load:
    call: cst.Call
    functions: tuple[cst.FunctionDef, ...]
    owner: cst.ClassDef | None


@dataclass
class _Use:
    """One occurrence of a container in its owner, classified by what the code does with it."""

    node: cst.BaseExpression
    # empty, rebind, store, nested-store, clear, evict, read, moved, meta, mutate, get, lookup, iterate, safe,
    # unfixable
    kind: str
    parents: tuple[cst.CSTNode, ...]
    method: str | None  # outermost function in the owner (None: class body / module level)
    functions: tuple[cst.FunctionDef, ...]
    rewrite: cst.BaseExpression | None = None  # for reads: the expression that hands the tensor out
    payload: cst.BaseExpression | None = None  # for stores and rebinds: the value stored
    in_loop: bool = False


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
def _code(node: cst.CSTNode, limit: int = 60) -> str:
    """The node's source on one line (comments of a multi-line expression dropped), shortened for messages."""
    text = cst.Module(body=[]).code_for_node(node)
    if "\n" in text:
        text = re.sub(r"#[^\n]*", "", text)
    text = " ".join(text.split()).replace("( ", "(").replace(" )", ")")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _self_attribute(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and _is_self(node.value):
        return node.attr.value
    return None


def _single_index(node: cst.Subscript) -> cst.BaseExpression | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return node.slice[0].slice.value
    return None


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


def _is_none_test(test: cst.BaseExpression, name: str, negated: bool) -> bool:
    """`name is None` (or `name is not None` when negated)."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == name):
        return False
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    operator = cst.IsNot if negated else cst.Is
    return (
        isinstance(target.operator, operator)
        and isinstance(target.comparator, cst.Name)
        and target.comparator.value == "None"
    )


_TENSOR_TYPE = re.compile(r"\b(?:[A-Z][a-z]+)?Tensor\b")


def _annotation_mentions_tensor(annotation: cst.Annotation | None) -> bool:
    """`Tensor`, `torch.Tensor`, `Optional[torch.FloatTensor]` - not `TensorDict` or `TensorType`."""
    if annotation is None:
        return False
    return bool(_TENSOR_TYPE.search(cst.Module(body=[]).code_for_node(annotation.annotation)))


def _block_ends_flow(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    statements = last.body if isinstance(last, cst.SimpleStatementLine) else [last]
    if isinstance(block, cst.SimpleStatementSuite):
        statements = block.body
    return bool(statements) and isinstance(statements[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _block_assigns(block: cst.BaseSuite, name: str) -> bool:
    statements: list[cst.CSTNode] = []
    if isinstance(block, cst.IndentedBlock):
        for line in block.body:
            if isinstance(line, cst.SimpleStatementLine):
                statements.extend(line.body)
    else:
        statements.extend(block.body)  # type: ignore[attr-defined]
    for statement in statements:
        if isinstance(statement, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in statement.targets
        ):
            return True
    return False


def _reads_entry(use: _Use, key: cst.BaseExpression) -> bool:
    """`c[key]` or `c.get(key, ...)`: a read of the entry stored under `key` (spelled the same way)."""
    parent = use.parents[-1] if use.parents else None
    if isinstance(parent, cst.Subscript) and parent.value is use.node:
        index = _single_index(parent)
        return index is not None and _code(index, 200) == _code(key, 200)
    grand = use.parents[-2] if len(use.parents) > 1 else None
    if (
        isinstance(parent, cst.Attribute)
        and parent.attr.value == "get"
        and isinstance(grand, cst.Call)
        and grand.func is parent
        and grand.args
    ):
        return grand.args[0].keyword is None and _code(grand.args[0].value, 200) == _code(key, 200)
    return False


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
# container uses: every occurrence of the container in its owner, classified
# ----------------------------------------------------------------------------------------------
class _UseWalker(cst.CSTVisitor):
    """Walks a class (for `self.X` containers) or the module (for module-level ones) once."""

    def __init__(
        self, checker: "DeviceResidentCache", owner: cst.ClassDef | cst.FunctionDef | cst.Module, names: set[str]
    ) -> None:
        super().__init__()
        self.checker = checker
        self.owner = owner
        self.names = names
        # containers named by a plain variable (module-level or function-local) rather than `self.<name>`
        self.module_level = not isinstance(owner, cst.ClassDef)
        self.stack: list[cst.CSTNode] = []
        self.functions: list[cst.FunctionDef] = []
        self.shadowed: list[set[str]] = []
        self.uses: dict[str, list[_Use]] = {name: [] for name in names}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.ClassDef) and node is not self.owner and not self.module_level:
            return False
        if isinstance(node, cst.FunctionDef):
            self.functions.append(node)
            if self.module_level:
                facts = self.checker.facts(node)
                local = node is not self.owner
                self.shadowed.append({name for name in self.names if local and facts.binds_locally(name)})
        self._inspect(node)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if isinstance(original_node, cst.FunctionDef):
            self.functions.pop()
            if self.module_level:
                self.shadowed.pop()

    def _inspect(self, node: cst.CSTNode) -> None:
        if self.module_level:
            if not isinstance(node, cst.Name) or node.value not in self.names:
                return
            parent = self.stack[-1] if self.stack else None
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                return
            if isinstance(
                parent, (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.NameItem, cst.ImportAlias, cst.AsName)
            ):
                if not (isinstance(parent, cst.Arg) and parent.value is node):
                    return
            if any(node.value in shadow for shadow in self.shadowed):
                return
            self._classify(node, node.value)
            return
        if isinstance(node, cst.Name) and node.value in self.names and not self.functions:
            # a class attribute: `_cache = {}` / `_cache: dict = {}` in the class body
            parent = self.stack[-1] if self.stack else None
            if isinstance(parent, cst.AssignTarget) and parent.target is node:
                self._assignment(node.value, node, self.stack[-2].value)  # type: ignore[attr-defined]
            elif isinstance(parent, cst.AnnAssign) and parent.target is node and parent.value is not None:
                self._assignment(node.value, node, parent.value)
            return
        if isinstance(node, cst.Attribute) and _is_self(node.value) and node.attr.value in self.names:
            self._classify(node, node.attr.value)

    def _method(self) -> str | None:
        return self.functions[0].name.value if self.functions else None

    def _add(self, name: str, node: cst.BaseExpression, kind: str, **extra) -> None:
        in_loop = any(isinstance(ancestor, (cst.For, cst.While)) for ancestor in self.stack)
        self.uses[name].append(
            _Use(node, kind, tuple(self.stack), self._method(), tuple(self.functions), in_loop=in_loop, **extra)
        )

    def _parent(self, depth: int) -> cst.CSTNode | None:
        return self.stack[-depth] if len(self.stack) >= depth else None

    def _inside_torch_save(self) -> bool:
        return any(
            isinstance(ancestor, cst.Call) and (self.checker.qualified_name(ancestor.func) or "") == "torch.save"
            for ancestor in self.stack
        )

    def _classify(self, node: cst.BaseExpression, name: str) -> None:  # noqa: C901 - one case per syntax
        parent = self._parent(1)
        grand = self._parent(2)
        great = self._parent(3)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            if isinstance(grand, cst.AssignTarget):
                statement = self._parent(3)
                self._add(name, node, "store", payload=getattr(statement, "value", None))
            elif any(isinstance(ancestor, cst.Del) for ancestor in self.stack):
                self._add(name, node, "evict")
            elif isinstance(grand, cst.AugAssign) and grand.target is parent:
                self._add(name, node, "mutate")
            elif _single_index(parent) is None:
                self._add(name, node, "unfixable")
            elif (
                isinstance(grand, cst.Attribute)
                and grand.value is parent
                and isinstance(great, cst.Call)
                and great.func is grand
            ):
                method = grand.attr.value
                if method in ("append", "extend", "insert"):
                    self._add(name, node, "nested-store")
                elif method in ("to", "cuda"):
                    self._add(name, node, "moved")
                elif method in _METADATA:
                    self._add(name, node, "meta")
                elif method == "clone" and not great.args:
                    self._add(name, node, "read", rewrite=great)
                elif _mutates(parent, grand, great):
                    self._add(name, node, "mutate")
                else:
                    self._add(name, node, "read", rewrite=parent)
            elif isinstance(grand, cst.Attribute) and grand.value is parent and grand.attr.value in _METADATA:
                self._add(name, node, "meta")  # `c[k].shape`: the same on any device
            elif _mutates(parent, grand, great):
                self._add(name, node, "mutate")
            else:
                self._add(name, node, "read", rewrite=parent)
            return
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if not (isinstance(grand, cst.Call) and grand.func is parent):
                self._add(name, node, "unfixable")
                return
            method = parent.attr.value
            if method in _STORE_METHODS or method in ("extend", "__setitem__"):
                used = not isinstance(great, cst.Expr)
                self._add(name, node, "unfixable" if method == "setdefault" and used else "store", payload=grand)
            elif method == "clear":
                self._add(name, node, "clear")
            elif method in _EVICT_METHODS:
                self._add(name, node, "evict")
            elif method == "get":
                self._add(name, node, "get", rewrite=grand)
            elif method in _HARMLESS_METHODS:
                self._add(name, node, "safe")
            elif method in _WHOLE_READ_METHODS and self._inside_torch_save():
                self._add(name, node, "safe")
            else:
                self._add(name, node, "unfixable")
            return
        if isinstance(parent, cst.ComparisonTarget) and parent.comparator is node:
            self._add(name, node, "lookup" if isinstance(parent.operator, (cst.In, cst.NotIn)) else "safe")
            return
        if isinstance(parent, cst.Comparison) and parent.left is node:
            self._add(name, node, "safe")
            return
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            self._assignment(name, node, grand.value)  # type: ignore[union-attr]
            return
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            if parent.value is None:
                self._add(name, node, "safe")
            else:
                self._assignment(name, node, parent.value)
            return
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
            callee = grand.func.value if isinstance(grand.func, cst.Name) else ""
            if callee in _HARMLESS_BUILTINS or self._inside_torch_save():
                self._add(name, node, "safe")
            else:
                self._add(name, node, "unfixable")
            return
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node:
            self._add(name, node, "safe")
            return
        if isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
            self._add(name, node, "safe")
            return
        if isinstance(parent, cst.Global):
            return
        if isinstance(parent, cst.NameItem):
            return
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
            self._add(name, node, "iterate")
            return
        self._add(name, node, "safe" if self._inside_torch_save() else "unfixable")

    def _assignment(self, name: str, node: cst.BaseExpression, value: cst.BaseExpression) -> None:
        kind = self.checker.empty_container_kind(value)
        if kind is not None:
            self._add(name, node, "empty", payload=value)
        else:
            self._add(name, node, "rebind", payload=value)


# ----------------------------------------------------------------------------------------------
# the checker
# ----------------------------------------------------------------------------------------------
@dataclass
class _ContainerReport:
    """What was decided about one container: its reportable stores and whether it can be fixed."""

    key: _ContainerKey
    stores: list[tuple[_Store, _Evidence]] = field(default_factory=list)
    read_changes: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    unfixable: str | None = None
    uses: list[_Use] = field(default_factory=list)


class DeviceResidentCache(Checker):
    code = "SF102"
    # A store is only reported as a snapshot: detached, cloned or computed with autograd off.
    tokens = ("detach", "clone", "no_grad", "inference_mode", "set_grad_enabled")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.module: cst.Module | None = None
        self.scopes: list[cst.ClassDef | cst.FunctionDef] = []
        self.loops: list[cst.For | cst.While] = []
        self.grad_off: list[bool] = [False]
        self.module_containers: dict[str, set[str]] = {}  # name -> kinds it is created as
        self.function_containers: dict[tuple[cst.FunctionDef, str], set[str]] = {}
        self.function_definitions: dict[tuple[cst.FunctionDef, str], list[cst.CSTNode]] = {}
        self.class_containers: dict[cst.ClassDef, dict[str, set[str]]] = {}
        self.class_body_definitions: dict[tuple[cst.ClassDef, str], list[cst.CSTNode]] = {}
        # (class, attribute) -> the methods that mention `self.<attribute>`
        self.occurrences: dict[tuple[cst.ClassDef, str], set[cst.FunctionDef]] = {}
        self.class_methods: dict[cst.ClassDef, set[str]] = {}
        self.device_attributes: dict[cst.ClassDef, list[str]] = {}
        self.stores: list[_Store] = []
        self.loads: list[_Load] = []
        self.hook_names: set[str] = set()
        self.foreign_attributes: set[str] = set()
        self.attribute_values: dict[str, list[cst.BaseExpression | None]] = {}
        self._facts: dict[int, ScopeBindings] = {}
        self.steps = StepIndex(context.imports)
        self.modules = ModuleIndex(context.imports)

    def get_visitors(self):
        return visitors_with(self, self.steps, self.modules)

    # --- traversal ------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.scopes and isinstance(self.scopes[-1], cst.ClassDef):
            self.class_methods.setdefault(self.scopes[-1], set()).add(node.name.value)
        self.scopes.append(node)
        # a nested def runs later, outside any enclosing no_grad block: only its own decorators count
        self.grad_off.append(any(is_grad_disabling_context(d.decorator, self.qualified_name) for d in node.decorators))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.grad_off.pop()

    def visit_With(self, node: cst.With) -> None:
        off = any(is_grad_disabling_context(item.item, self.qualified_name) for item in node.items)
        self.grad_off.append(self.grad_off[-1] or off)

    def leave_With(self, original_node: cst.With) -> None:
        self.grad_off.pop()

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not _is_self(node.value):
            self.foreign_attributes.add(node.attr.value)
            return
        functions = self._functions_in_owner()
        owner = self._enclosing_class()
        if functions and owner is not None:
            self.occurrences.setdefault((owner, node.attr.value), set()).add(functions[0])

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record_definition(target.target, node.value, node)
            if isinstance(target.target, cst.Subscript):
                index = _single_index(target.target)
                if index is not None:
                    self._record_store(
                        target.target.value, node, node.value, index, "setitem", shared=len(node.targets) > 1
                    )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record_definition(node.target, node.value, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (self.qualified_name(func) or "") == "torch.load":
            self.loads.append(_Load(node, self._functions_in_owner(), self._enclosing_class()))
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if "hook" in method and method.startswith("register"):
            for arg in node.args:
                self.hook_names |= {n for n in names_in(arg.value)}
                if isinstance(arg.value, cst.Attribute):
                    self.hook_names.add(arg.value.attr.value)
            return
        receiver = func.value
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if method == "append" and isinstance(receiver, cst.Subscript) and len(positional) == 1:
            self._record_store(receiver.value, node, positional[0], _single_index(receiver), "nested-append")
        elif method == "append" and len(positional) == 1:
            self._record_store(receiver, node, positional[0], None, "append")
        elif method == "insert" and len(positional) == 2:
            self._record_store(receiver, node, positional[1], None, "insert")
        elif method == "setdefault" and len(positional) == 2:
            self._record_store(receiver, node, positional[1], positional[0], "setdefault")
        elif method == "update" and len(positional) == 1:
            self._record_update(receiver, node, positional[0])

    def _record_update(self, receiver: cst.BaseExpression, call: cst.Call, mapping: cst.BaseExpression) -> None:
        if isinstance(mapping, cst.Dict):
            for element in mapping.elements:
                if isinstance(element, cst.DictElement):
                    self._record_store(receiver, call, element.value, element.key, "update")
        elif isinstance(mapping, cst.DictComp):
            names = frozenset(name for comp in _comprehension_fors(mapping.for_in) for name in names_in(comp.target))
            self._record_store(receiver, call, mapping.value, mapping.key, "update", names)

    # --- what the traversal collects ------------------------------------------------------------
    def _enclosing_class(self) -> cst.ClassDef | None:
        for scope in reversed(self.scopes):
            if isinstance(scope, cst.ClassDef):
                return scope
        return None

    def _functions_in_owner(self) -> tuple[cst.FunctionDef, ...]:
        functions: list[cst.FunctionDef] = []
        for scope in reversed(self.scopes):
            if isinstance(scope, cst.ClassDef):
                break
            functions.append(scope)
        return tuple(reversed(functions))

    def _record_definition(self, target: cst.BaseExpression, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        self._record_attribute_values(target, value)
        attribute = _self_attribute(target)
        owner = self._enclosing_class()
        if attribute is not None and owner is not None and self._is_device_value(attribute, value):
            self.device_attributes.setdefault(owner, []).append(attribute)
        kind = self.empty_container_kind(value)
        if kind is None:
            return
        if isinstance(target, cst.Name):
            if not self.scopes:
                self.module_containers.setdefault(target.value, set()).add(kind)
            elif isinstance(self.scopes[-1], cst.FunctionDef):
                key = (self.scopes[-1], target.value)
                self.function_containers.setdefault(key, set()).add(kind)
                self.function_definitions.setdefault(key, []).append(statement)
            elif isinstance(self.scopes[-1], cst.ClassDef):
                self.class_containers.setdefault(self.scopes[-1], {}).setdefault(target.value, set()).add(kind)
                self.class_body_definitions.setdefault((self.scopes[-1], target.value), []).append(statement)
        elif attribute is not None and owner is not None:
            self.class_containers.setdefault(owner, {}).setdefault(attribute, set()).add(kind)

    def _record_attribute_values(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """Every value assigned to `self.<name>` in the module (None where unpacking hides it)."""
        attribute = _self_attribute(target)
        if attribute is not None:
            self.attribute_values.setdefault(attribute, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._record_attribute_values(element.value, None)

    def _is_device_value(self, attribute: str, value: cst.BaseExpression) -> bool:
        """`self.device = torch.device(...)`, `self.model_device = device`: an attribute holding the working device."""
        if is_host_name(attribute) or is_cpu_expression(value, self.qualified_name):
            return False
        if isinstance(value, cst.Call) and (self.qualified_name(value.func) or "") == "torch.device":
            return True
        return is_device_name(attribute)

    def _record_store(
        self,
        receiver: cst.BaseExpression,
        node: cst.CSTNode,
        value: cst.BaseExpression,
        key: cst.BaseExpression | None,
        op: str,
        comprehension_names: frozenset[str] = frozenset(),
        shared: bool = False,
    ) -> None:
        attribute = _self_attribute(receiver)
        if attribute is not None:
            owner = self._enclosing_class()
            if owner is None:
                return
            container = _ContainerKey(owner, attribute)
            functions = self._functions_in_owner()
        elif isinstance(receiver, cst.Name):
            functions = tuple(scope for scope in self.scopes if isinstance(scope, cst.FunctionDef))
            # the innermost function that created a container of that name, else the module's
            owner = next((f for f in reversed(functions) if (f, receiver.value) in self.function_containers), None)
            container = _ContainerKey(owner, receiver.value)
        else:
            return
        self.stores.append(
            _Store(
                container,
                node,
                value,
                key,
                op,
                functions,
                tuple(self.loops),
                self.grad_off[-1],
                comprehension_names,
                shared,
                self.steps.frames(),
            )
        )

    def empty_container_kind(self, value: cst.BaseExpression) -> str | None:
        """`{}`, `dict()`, `OrderedDict()`, `defaultdict(...)`, `[]`, `deque()` (unbounded) -> dict/list."""
        if isinstance(value, cst.Dict) and not value.elements:
            return "dict"
        if isinstance(value, cst.List) and not value.elements:
            return "list"
        if isinstance(value, cst.Call):
            name = self.qualified_name(value.func) or dotted_name(value.func) or ""
            kind = _EMPTY_CONSTRUCTORS.get(name)
            if kind is None:
                return None
            if name.endswith("deque") and (len(value.args) > 1 or any(a.keyword is not None for a in value.args)):
                return None  # deque(maxlen=n) is bounded
            if name.endswith("defaultdict"):
                return kind
            # `dict()`, `dict({})`, `list([])`: created empty
            if all(
                arg.keyword is None
                and isinstance(arg.value, (cst.Dict, cst.List, cst.Tuple))
                and not arg.value.elements
                for arg in value.args
            ):
                return kind
            return None
        return None

    def facts(self, scope: cst.FunctionDef | cst.Module) -> ScopeBindings:
        cached = self._facts.get(id(scope))
        if cached is None:
            grad_off = isinstance(scope, cst.FunctionDef) and any(
                is_grad_disabling_context(d.decorator, self.qualified_name) for d in scope.decorators
            )
            cached = self._facts[id(scope)] = ScopeBindings(scope, self.qualified_name, grad_off)
        return cached

    # --- deciding -------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        # Cheap checks first: only containers with a plausible store get their uses walked.
        by_container: dict[_ContainerKey, list[tuple[_Store, _Evidence]]] = {}
        for store in self.stores:
            kinds = self._defined_kinds(store)
            if len(kinds) != 1:
                continue
            evidence = self._plausible_store(store, next(iter(kinds)))
            if evidence is not None:
                by_container.setdefault(store.container, []).append((store, evidence))
        if not by_container:
            return
        uses = self._collect_uses(by_container)
        reports: list[_ContainerReport] = []
        for container, candidates in by_container.items():
            report = self._decide_container(container, candidates, uses.get(container))
            if report is not None and report.stores:
                reports.append(report)
        for report in reports:
            self._emit(report)

    def _defined_kinds(self, store: _Store) -> set[str]:
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

    def _outlives_a_step(self, store: _Store, owner: cst.FunctionDef) -> bool:
        """A function-local container is long-lived when a training loop of the function fills it across
        iterations (it is created before the loop), or when a closure the function returns fills it."""
        definitions = self.function_definitions.get((owner, store.container.name), [])
        position = store.functions.index(owner)
        if position + 1 < len(store.functions):
            closure = store.functions[position + 1]
            return any(
                isinstance(node, cst.Return)
                and isinstance(node.value, cst.Name)
                and node.value.value == closure.name.value
                for node in walk_scope(owner)
            )
        name = store.container.name
        if any(
            isinstance(node, cst.Return) and node.value is not None and name in names_in(node.value)
            for node in walk_scope(owner)
        ):
            return False  # a result the function builds and hands back, not a cache
        for loop in store.loops:
            if not contains(owner, loop) or any(contains(loop, definition) for definition in definitions):
                continue
            if _is_training_loop(loop):
                return True
        return False

    def _collect_uses(
        self, by_container: dict[_ContainerKey, list[tuple[_Store, _Evidence]]]
    ) -> dict[_ContainerKey, tuple[list[_Use], _UseWalker]]:
        owners: dict[cst.ClassDef | cst.FunctionDef | None, set[str]] = {}
        for container in by_container:
            owners.setdefault(container.owner, set()).add(container.name)
        result: dict[_ContainerKey, tuple[list[_Use], _UseWalker]] = {}
        for owner, names in owners.items():
            if not isinstance(owner, cst.ClassDef):
                root = owner if owner is not None else self.module
                assert root is not None
                walker = _UseWalker(self, root, names)
                root.visit(walker)
            else:
                # only the methods that mention the containers, and their class-body definitions
                walker = _UseWalker(self, owner, names)
                roots: list[cst.CSTNode] = []
                for name in names:
                    roots.extend(self.class_body_definitions.get((owner, name), ()))
                    roots.extend(self.occurrences.get((owner, name), ()))
                for root in dict.fromkeys(roots):
                    root.visit(walker)
            for name in names:
                result[_ContainerKey(owner, name)] = (walker.uses[name], walker)
        return result

    def _decide_container(
        self,
        container: _ContainerKey,
        candidates: list[tuple[_Store, _Evidence]],
        found: tuple[list[_Use], _UseWalker] | None,
    ) -> _ContainerReport | None:
        if found is None:
            return None
        uses, walker = found
        kind = self._container_kind(uses)
        if kind is None or self._is_cleared(container, uses):
            return None
        if any(use.kind == "mutate" for use in uses):
            return None  # entries updated in place (`c[k].mul_(m).add_(x)`, `c[k] += x`): running state per key
        if not container.on_self and self._built_once(candidates, uses):
            return None
        report = _ContainerReport(container, uses=uses)
        tensor_hint = self._container_holds_tensors(uses)
        for store, evidence in candidates:
            if self._confirmed(store, evidence, tensor_hint, uses):
                report.stores.append((store, evidence))
        if report.stores:
            report.unfixable = self._uncertain_entries(report, tensor_hint)
            if report.unfixable is None:
                self._plan_reads(report, walker, kind)
        return report

    def _built_once(self, candidates: list[tuple[_Store, _Evidence]], uses: list[_Use]) -> bool:
        """A result built to be handed over, not a cache: the container itself is saved, loaded into a
        model or returned (`torch.save(out, p)`, `model.load_state_dict(sd)`, `return sd`), nothing reads
        an entry back by key, and no store runs as part of training (a conversion or merge script)."""
        if any(use.kind in ("read", "get", "lookup", "moved") for use in uses):
            return False  # consulted by key: a memo
        if any(self.steps.in_training(store.frames) for store, _ in candidates):
            return False  # filled step after step: it grows with training whatever happens to it after
        return any(hands_over(use.node, use.parents, self.qualified_name) for use in uses)

    def _uncertain_entries(self, report: _ContainerReport, tensor_hint: bool) -> str | None:
        """Why the fix cannot rewrite the entries: tuples of tensors, or a forward output that may be a
        structure (a `ModelOutput`, a dict) rather than one tensor."""
        for store, evidence in report.stores:
            if evidence.tuple:
                return f"`{report.key.display()}` holds tuples of tensors (`{_code(store.value, 40)}`)"
            if not (evidence.tensor or evidence.placed or tensor_hint):
                return f"`{_code(store.value, 40)}` may return more than one tensor"
        return None

    def _container_kind(self, uses: list[_Use]) -> str | None:
        kinds = {
            self.empty_container_kind(use.payload) for use in uses if use.kind == "empty" and use.payload is not None
        }
        return kinds.pop() if len(kinds) == 1 else None

    def _is_cleared(self, container: _ContainerKey, uses: list[_Use]) -> bool:
        if any(use.kind in ("clear", "evict") for use in uses):
            return True
        empties = [use for use in uses if use.kind == "empty"]
        rebinds = [use for use in uses if use.kind == "rebind" and use.method not in _SETUP_METHODS]
        if any(not self._restores(use) for use in rebinds):
            return True  # rebuilt outside setup (pruned, replaced): the old entries are freed
        if container.owner is None:
            return len(empties) > 1 or any(use.functions or use.in_loop for use in empties)
        if isinstance(container.owner, cst.FunctionDef):
            return len(empties) > 1 or any(use.functions[-1] is not container.owner or use.in_loop for use in empties)
        outside = [use for use in empties if use.method not in _SETUP_METHODS]
        if not outside:
            return False
        inside = [use for use in empties if use.method in _SETUP_METHODS]
        return (
            bool(inside)
            or len({use.method for use in outside}) > 1
            or any(any(word in (use.method or "").lower() for word in _PER_STEP_WORDS) for use in outside)
        )

    def _restores(self, use: _Use) -> bool:
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
            isinstance(payload, cst.Call) and isinstance(payload.func, cst.Attribute) and _is_self(payload.func.value)
        )

    def _container_holds_tensors(self, uses: list[_Use]) -> bool:
        for use in uses:
            if use.kind == "empty":
                statement = use.parents[-1]
                if isinstance(statement, cst.AnnAssign) and _annotation_mentions_tensor(statement.annotation):
                    return True
            if use.kind == "read" and isinstance(use.rewrite, cst.Call):
                return True  # read as `c[key].clone()`
            if use.kind == "read" and self._operand_of_tensor_function(use):
                return True  # read into `torch.cat([c[k] for k in keys])`
        return False

    def _operand_of_tensor_function(self, use: _Use) -> bool:
        """`torch.stack([c[k] for k in ks])`, `F.normalize(c[k])`: the entry read is an operand of a torch
        function that takes tensors, so the container holds tensors."""
        child: cst.CSTNode = use.node
        for parent in reversed(use.parents):
            if isinstance(parent, cst.Call):
                name = self.qualified_name(parent.func) or ""
                module, _, last = name.rpartition(".")
                return (
                    any(arg is child for arg in parent.args)
                    and module in _TENSOR_FUNCTION_MODULES
                    and last[:1].islower()
                    and last not in _NOT_TENSOR_FUNCTIONS
                    and last not in _TORCH_FROM_DATA
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

    # --- one store ------------------------------------------------------------------------------
    def _plausible_store(self, store: _Store, kind: str) -> _Evidence | None:
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

    def _confirmed(self, store: _Store, evidence: _Evidence, tensor_hint: bool, uses: list[_Use]) -> bool:
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

    def _recomputes_own_entry(self, store: _Store, facts: ScopeBindings, uses: list[_Use]) -> bool:
        """The stored value is computed, through locals, from the entry it replaces (`old = c[k]`, `c[k] = f(old)`).

        Only a read of the same key counts: a batched memo that looks up which keys are missing
        (`k not in c`) and stores rows of the freshly computed batch adds new entries.
        """
        if store.key is None:
            return False
        entry_reads = [use.node for use in uses if _reads_entry(use, store.key)]
        return bool(entry_reads) and _computed_from(store.value, facts, entry_reads)

    def _grows(self, store: _Store, kind: str) -> bool:
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
        if any(is_device_name(name) for name in names) or "device" in _code(key, 200):
            return False  # a per-device memo is meant to live on each device
        if names & store.comprehension_names:
            return True
        if not store.functions:
            facts = self.facts(self.module)  # type: ignore[arg-type]
            return any(name in facts.loop_iters or self._bound_to_data(facts, name) for name in names)
        facts = self.facts(store.functions[-1])
        for name in names - {"self", "cls"}:
            if name in facts.params or name in facts.loop_iters or self._bound_to_data(facts, name):
                return True
        return False

    def _bound_to_data(self, facts: ScopeBindings, name: str) -> bool:
        bindings = facts.bindings.get(name, [])
        return bool(bindings) and not all(b.value is not None and _is_literal(b.value) for b in bindings)

    def _in_hook(self, store: _Store) -> bool:
        for function in store.functions:
            name = function.name.value
            if name in self.hook_names or "hook" in name.lower():
                return True
        return False

    def _in_data_pipeline(self, store: _Store) -> bool:
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

    def _iterates_parameters(self, store: _Store) -> bool:
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
        if self.module is not None:
            chain.append(self.facts(self.module))
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
            attribute = _self_attribute(expr)
            if attribute is None:
                return False
            values = self.attribute_values.get(attribute, [])
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
                return _Evidence(tensor=_annotation_mentions_tensor(param.annotation))
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
        if _is_self(root) and steps and steps[0][0].startswith("."):
            steps = steps[1:]  # `self._cache`, then what is done with it
        elif not (isinstance(root, cst.Name) and root.value in self.module_containers):
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
    def _plan_reads(self, report: _ContainerReport, walker: _UseWalker, kind: str) -> None:
        container = report.key
        if container.on_self and container.name in self.foreign_attributes:
            report.unfixable = f"`{container.name}` is also used outside the class"
            return
        for use in report.uses:
            if use.kind == "unfixable":
                statement = _code(self._statement_of(use), 50)
                report.unfixable = f"`{container.display()}` is used in a way the fix cannot follow (`{statement}`)"
                return
            if use.kind == "nested-store":
                report.unfixable = f"`{container.display()}` holds lists of tensors"
                return
            if use.kind == "iterate" and kind == "list":
                report.unfixable = f"`{container.display()}` is iterated over"
                return
        other = self._other_store(report)
        if other is not None:
            report.unfixable = f"`{container.display()}` also receives `{_code(other, 40)}`, which may not be a tensor"
            return
        if not any(use.kind in ("read", "get", "moved", "meta") for use in report.uses):
            # nothing here reads the entries back: whoever does (another module) would get CPU tensors
            report.unfixable = (
                f"`{container.display()}` is never read here, so its readers cannot be moved back to the device"
            )
            return
        for use in report.uses:
            if use.kind == "read":
                if not self._plan_read(report, walker, use, use.rewrite):  # type: ignore[arg-type]
                    return
            elif use.kind == "get":
                if not self._plan_get(report, walker, use):
                    return

    def _other_store(self, report: _ContainerReport) -> cst.BaseExpression | None:
        """A value stored into the container, besides the reported stores, that is not certainly a tensor.

        Reads are moved back with `.to(device)`: that must hold for every entry a read can return.
        """
        covered = {id(node) for store, _ in report.stores for node in (store.value, store.node)}
        for use in report.uses:
            if use.kind == "rebind" and not self._restores(use):
                return use.payload
            if use.kind != "store" or use.payload is None or id(use.payload) in covered or self._restores(use):
                continue  # reported stores, and restores from `torch.load`, hold tensors
            for value in _stored_values(use.payload, use.node):
                if value is None:
                    return use.payload
                evidence = self.evaluate(value, self._scope_chain(use.functions))
                if not evidence.tensor or evidence.not_tensor:
                    return value  # CPU tensors are fine: `.to(device)` moves them like the others
        return None

    def _statement_of(self, use: _Use) -> cst.CSTNode:
        for ancestor in reversed(use.parents):
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                if isinstance(ancestor, cst.SimpleStatementLine) and ancestor.body:
                    return ancestor.body[0]
                return use.node
        return use.node

    def _plan_read(
        self, report: _ContainerReport, walker: _UseWalker, use: _Use, expression: cst.BaseExpression
    ) -> bool:
        device = self._device_expression(report.key, walker, use.functions, use.node)
        if device is None:
            where = f"`{use.functions[-1].name.value}()`" if use.functions else "module level"
            report.unfixable = f"no device is at hand where `{report.key.display()}` is read in {where}"
            return False
        report.read_changes[expression] = move_back(expression, device)
        return True

    def _plan_get(self, report: _ContainerReport, walker: _UseWalker, use: _Use) -> bool:
        """`v = c.get(key)` with a None guard: move `v` back wherever it is handed out."""
        call = use.rewrite
        assert isinstance(call, cst.Call)
        reason = f"`{_code(call, 40)}` may return None where it is used"
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(call.args) > 1 and not (
            len(positional) == 2 and isinstance(positional[1].value, cst.Name) and positional[1].value.value == "None"
        ):
            report.unfixable = reason
            return False
        position = next((i for i, ancestor in enumerate(use.parents) if ancestor is call), 0)
        parent = use.parents[position - 1] if position > 0 else None
        if isinstance(parent, cst.Attribute) and parent.attr.value in ("to", "cuda"):
            return True  # already moved where it is read
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            return True  # `c.get(k) is None`
        if not (
            isinstance(parent, cst.Assign)
            and parent.value is call
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            report.unfixable = reason
            return False
        assign = parent
        name = assign.targets[0].target.value  # type: ignore[attr-defined]
        function = use.functions[-1] if use.functions else self.module
        assert function is not None
        finder = _NameUses(name, assign)
        function.visit(finder)
        if not finder.bindings_guarded():
            report.unfixable = reason
            return False
        for node, ancestors in finder.uses:
            if _inside_refill(ancestors, name):
                continue  # the freshly computed value, not the cached one
            parent_node = ancestors[-1]
            if isinstance(parent_node, cst.Comparison) and parent_node.left is node:
                continue
            if isinstance(parent_node, cst.Attribute) and parent_node.value is node:
                grand = ancestors[-2]
                if parent_node.attr.value in ("to", "cuda") and isinstance(grand, cst.Call):
                    continue
                if parent_node.attr.value in _METADATA:
                    continue
            if not _guarded(node, ancestors, name):
                report.unfixable = reason
                return False
            if _mutates(node, parent_node, ancestors[-2] if len(ancestors) > 1 else None):
                report.unfixable = f"an entry of `{report.key.display()}` is modified in place through `{name}`"
                return False
            expression: cst.BaseExpression = node
            if (
                isinstance(parent_node, cst.Attribute)
                and parent_node.value is node
                and parent_node.attr.value == "clone"
            ):
                grand = ancestors[-2]
                if isinstance(grand, cst.Call) and grand.func is parent_node and not grand.args:
                    expression = grand
            device = self._device_expression(report.key, walker, use.functions, node)
            if device is None:
                where = f"`{use.functions[-1].name.value}()`" if use.functions else "module level"
                report.unfixable = f"no device is at hand where `{report.key.display()}` is read in {where}"
                return False
            report.read_changes[expression] = move_back(expression, device)
        return True

    def _device_expression(
        self, container: _ContainerKey, walker: _UseWalker, functions: tuple[cst.FunctionDef, ...], at: cst.CSTNode
    ) -> str | None:
        """An expression naming the device the reader works on, available where `at` is."""
        for function in reversed(functions):
            facts = self.facts(function)
            for name, param in facts.params.items():
                annotation = _code(param.annotation.annotation, 200) if param.annotation else ""
                if (is_device_name(name) or annotation.endswith("device")) and not is_host_name(name):
                    return name
            for name, bindings in facts.bindings.items():
                if is_device_name(name) and not is_host_name(name) and _bound_before(function, bindings, at):
                    return name
            for name, param in facts.params.items():
                if param.annotation is not None and _code(param.annotation.annotation, 200) in (
                    "Tensor",
                    "torch.Tensor",
                ):
                    return f"{name}.device"
        if isinstance(container.owner, cst.ClassDef) and functions:
            first = functions[0].params.params
            if first and first[0].name.value == "self":
                attributes = self.device_attributes.get(container.owner, [])
                methods = self.class_methods.get(container.owner, set())
                if "device" in attributes or "device" in methods or self._has_device_base(container.owner):
                    return "self.device"
                for attribute in attributes:
                    return f"self.{attribute}"
        if self.module is not None:
            facts = self.facts(self.module)
            for name, bindings in facts.bindings.items():
                if is_device_name(name) and not is_host_name(name):
                    if functions or _bound_before(self.module, bindings, at):
                        return name
        return None

    def _has_device_base(self, owner: cst.ClassDef) -> bool:
        for base in owner.bases:
            name = self.qualified_name(base.value) or dotted_name(base.value) or ""
            if name.rsplit(".", 1)[-1] in _DEVICE_BASES:
                return True
        return False

    # --- findings -------------------------------------------------------------------------------------
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
                f"`{_code(load.call, 50)}` restores `{container}` with every tensor on the device it was saved "
                "from (the accelerator), so the whole cache lands in accelerator memory at once; pass "
                '`map_location="cpu"` and keep the cache on the CPU',
                fix,
            )

    def _store_message(self, report: _ContainerReport, store: _Store) -> str:
        container = report.key.display()
        root, _ = method_chain(store.value, self.qualified_name)
        stored = _code(store.value, 60)
        where = (
            f"on the device `{root.value}` lives on"
            if isinstance(root, cst.Name) and root.value != "self"
            else "on the device it was computed on"
        )
        growth = (
            "every call adds an entry"
            if store.op in ("append", "insert")
            else (
                f"it gains an entry for every new key (`{_code(store.key, 30)}`)"
                if store.key is not None
                else "it gains an entry for every new key"
            )
        )
        suggestion = _code(cpu_copy(store.value, self.qualified_name), 70)
        message = (
            f"`{container}` keeps `{stored}` {where} (the accelerator): "
            f"{growth} and nothing frees them between batches, so accelerator memory grows until it runs out; "
            f"store a CPU copy (`{suggestion}`) and move entries back with `.to(device, non_blocking=True)` "
            "where they are read"
        )
        if report.unfixable:
            message += f" (no automatic fix: {report.unfixable})"
        elif store.shared_value:
            message += f" (no automatic fix: `{_code(store.value, 40)}` is also bound to another name here)"
        return message

    def _restoring_loads(self, report: _ContainerReport) -> list[_Load]:
        """`torch.load` calls (without map_location) whose result fills this container."""
        container = report.key
        storing_methods = {use.method for use in report.uses if use.kind in ("store", "nested-store") and use.method}
        restored: list[_Load] = []
        for load in self.loads:
            if has_map_location(load.call):
                continue
            if isinstance(container.owner, cst.FunctionDef):
                if container.owner not in load.functions:
                    continue
            elif load.owner is not container.owner:
                continue
            if self._load_fills(load, report, storing_methods):
                restored.append(load)
        return restored

    def _load_fills(self, load: _Load, report: _ContainerReport, storing_methods: set[str]) -> bool:
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

        for use in report.uses:
            in_scope = (use.functions[-1] if use.functions else self.module) is scope
            if in_scope and use.kind in ("store", "rebind", "empty") and carries(use.payload):
                return True
        finder = _MethodCalls(report.key.on_self)
        scope.visit(finder)
        for name, call in finder.calls:
            if name in storing_methods and any(carries(arg.value) for arg in call.args):
                return True
        # a `load_cache()`-like method returning the loaded data that the container is assigned from
        if isinstance(scope, cst.FunctionDef) and _returns_any(scope, load.call, sources):
            for use in report.uses:
                if use.kind in ("rebind", "store") and use.payload is not None:
                    for call in walk(use.payload):
                        if isinstance(call, cst.Call) and _called_name(call.func) == scope.name.value:
                            return True
        return False


# ----------------------------------------------------------------------------------------------
# fix helpers
# ----------------------------------------------------------------------------------------------
def _stored_values(payload: cst.BaseExpression, container: cst.BaseExpression) -> list[cst.BaseExpression | None]:
    """The values a store puts into a container (None where they cannot be told)."""
    if not (
        isinstance(payload, cst.Call) and isinstance(payload.func, cst.Attribute) and payload.func.value is container
    ):
        return [payload]  # `c[k] = value`
    method = payload.func.attr.value
    positional = [arg.value for arg in payload.args if arg.keyword is None and not arg.star]
    if method == "append" and len(positional) == 1:
        return positional
    if method in ("insert", "setdefault") and len(positional) == 2:
        return positional[1:]
    if method == "update" and len(positional) == 1 and isinstance(positional[0], cst.Dict):
        return [e.value if isinstance(e, cst.DictElement) else None for e in positional[0].elements]
    if method == "update" and len(positional) == 1 and isinstance(positional[0], cst.DictComp):
        return [positional[0].value]
    return [None]


def _is_training_loop(loop: cst.For | cst.While) -> bool:
    """A loop that runs backward and an optimizer update: `loss.backward()` plus `opt.step()`/`zero_grad()`.

    A sampling loop calling `scheduler.step(noise, t, x)` (arguments) or a guidance loop that only
    runs backward is not one.
    """
    backward = update = False
    for node in walk(loop):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            backward = backward or method == "backward"
            update = update or method == "zero_grad" or (method == "step" and not node.args)
            if backward and update:
                return True
    return False


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements]
    return [expr]


def _comprehension_fors(comp: cst.CompFor | None):
    while comp is not None:
        yield comp
        comp = comp.inner_for_in


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


def _bound_before(scope: cst.CSTNode, bindings: list[ScopeBinding], at: cst.CSTNode) -> bool:
    """Whether one of the bindings comes before `at` in source order (a pre-order walk of the scope)."""
    statements = {id(b.statement) for b in bindings}
    for node in preorder(scope):
        if id(node) in statements:
            return True
        if node is at:
            return False
    return False


class _MethodCalls(cst.CSTVisitor):
    """Calls of `self.m(...)` (or of module functions `m(...)`) in one function."""

    def __init__(self, on_self: bool) -> None:
        super().__init__()
        self.on_self = on_self
        self.calls: list[tuple[str, cst.Call]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.on_self and isinstance(func, cst.Attribute) and _is_self(func.value):
            self.calls.append((func.attr.value, node))
        elif not self.on_self and isinstance(func, cst.Name):
            self.calls.append((func.value, node))


class _NameUses(cst.CSTVisitor):
    """Reads of one local name in a function, with their ancestors, and its other bindings."""

    def __init__(self, name: str, binding: cst.Assign) -> None:
        super().__init__()
        self.name = name
        self.binding = binding
        self.stack: list[cst.CSTNode] = []
        self.uses: list[tuple[cst.Name, tuple[cst.CSTNode, ...]]] = []
        self.other_bindings: list[tuple[cst.CSTNode, ...]] = []
        self.started = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.binding:
            self.started = True
        if isinstance(node, (cst.Lambda,)) or (isinstance(node, cst.FunctionDef) and self.stack):
            return False
        if isinstance(node, cst.Name) and node.value == self.name and self.stack:
            parent = self.stack[-1]
            if isinstance(parent, cst.AssignTarget) and parent.target is node:
                if self.stack[-2] is not self.binding:
                    self.other_bindings.append(tuple(self.stack))
            elif isinstance(parent, cst.Attribute) and parent.attr is node:
                pass
            elif isinstance(parent, (cst.Arg,)) and parent.keyword is node:
                pass
            elif isinstance(parent, cst.Param):
                self.other_bindings.append(tuple(self.stack))
            elif self.started:
                self.uses.append((node, tuple(self.stack)))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def bindings_guarded(self) -> bool:
        """Other bindings of the name are only the refill inside `if name is None:`."""
        for ancestors in self.other_bindings:
            if not any(isinstance(a, cst.If) and _is_none_test(a.test, self.name, negated=False) for a in ancestors):
                return False
        return True


def _mutates(entry: cst.CSTNode, parent: cst.CSTNode | None, grand: cst.CSTNode | None) -> bool:
    """Whether the code writes into a cache entry it read (`e.mul_(d)`, `e[i] = v`, `e.data = t`, `e += 1`):
    a copy moved to another device would take the write instead of the cached tensor."""
    if isinstance(parent, cst.AugAssign) and parent.target is entry:
        return True
    if isinstance(parent, cst.Attribute) and parent.value is entry:
        method = parent.attr.value
        if isinstance(grand, cst.Call) and grand.func is parent and method.endswith("_") and not method.endswith("__"):
            return True
        return isinstance(grand, (cst.AssignTarget, cst.AugAssign))
    if isinstance(parent, cst.Subscript) and parent.value is entry:
        return isinstance(grand, (cst.AssignTarget, cst.AugAssign))
    return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "out"


def _inside_refill(ancestors: tuple[cst.CSTNode, ...], name: str) -> bool:
    """Inside `if name is None:` whose block re-binds the name (the miss path computing a fresh value)."""
    for index, ancestor in enumerate(ancestors[:-1]):
        if (
            isinstance(ancestor, cst.If)
            and _is_none_test(ancestor.test, name, negated=False)
            and ancestors[index + 1] is ancestor.body
            and _block_assigns(ancestor.body, name)
        ):
            return True
    return False


def _guarded(node: cst.Name, ancestors: tuple[cst.CSTNode, ...], name: str) -> bool:
    """Whether `name` cannot be None here: inside `if name is not None:`, or after `if name is None: return/refill`."""
    chain = (*ancestors, node)
    for index, ancestor in enumerate(ancestors):
        child = chain[index + 1]
        if isinstance(ancestor, cst.If):
            if _is_none_test(ancestor.test, name, negated=True) and child is ancestor.body:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.orelse:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.body:
                return False
        if isinstance(ancestor, cst.IfExp):
            if _is_none_test(ancestor.test, name, negated=True) and child is ancestor.body:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.orelse:
                return True
        body = getattr(ancestor, "body", None)
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and isinstance(body, (list, tuple)):
            position = next((i for i, statement in enumerate(body) if statement is child), None)
            if position is None:
                continue
            for statement in body[:position]:
                if isinstance(statement, cst.If) and _is_none_test(statement.test, name, negated=False):
                    if _block_ends_flow(statement.body) or _block_assigns(statement.body, name):
                        return True
    return False
