"""Long-lived containers and what a program does with them: store, read, evict, clear, hand over.

A dict or list that outlives the call filling it is state carried across training steps: an
attribute of `self` created empty in the class (`self._cache = {}`), a class attribute, a
module-level container, or a function-local one that a training loop of the function (or a closure
the function returns) fills across calls. `Containers` records, in the engine's single traversal,
where each is created empty, every store into it (`c[k] = v`, `c.append(v)`, `c.setdefault(k, v)`,
`c.update({k: v})`), `torch.load` calls that may restore one, and which methods mention each
`self.<attr>`; `uses(...)` then classifies every occurrence of the containers a rule asks about
(store, read, get, evict, clear, re-creation, hand-over...).

A container filled entry by entry is either *state* that later code consults by key (a memo, a
cache, a feature bank, a loss history) or a *result* built to be handed over as a whole: a converted
state dict written with `torch.save`/`save_file`, a merged LoRA state dict loaded into a model, a
mapping a function returns to its caller. The difference is in the data flow, not in the names: a
result is passed whole to a writer or returned, and nothing looks its entries up by key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import libcst as cst

from stabfix.model import vocabulary as vocab
from stabfix.model.traversal import visit_readonly
from stabfix.model.devices import (
    is_cpu_expression,
    is_device_name,
    is_grad_disabling_context,
    is_host_name,
    method_chain,
)
from stabfix.model.imports import ImportTracker, dotted_name
from stabfix.model.names import Binding, Names, Scope
from stabfix.model.structure import Frame, StepIndex
from stabfix.model.syntax import code_of, contains, names_in, walk
from stabfix.model.values import (
    METADATA_STEPS,
    PARAMETER_ITERATORS,
    NOT_TENSOR_FUNCTIONS,
    TENSOR_FUNCTION_MODULES,
    TORCH_FROM_DATA,
    annotation_mentions_tensor,
)

# Functions that write their (first) argument out: the object leaves the program as a file.
WRITERS = frozenset(
    {
        "torch.save",
        "safetensors.torch.save_file",
        "safetensors.torch.save",
        "safetensors.numpy.save_file",
        "pickle.dump",
        "pickle.dumps",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "joblib.dump",
    }
)
# Methods whose receiver takes the object over: `model.load_state_dict(sd)` (torch.nn.Module),
# `accelerator.save(sd, path)` (accelerate), `model.save_pretrained(dir, state_dict=sd)` (transformers).
_TAKING_METHODS = frozenset({"load_state_dict", "save", "save_file", "save_pretrained", "save_model"})
# Syntax that only wraps the container on its way out: `{"model": sd}`, `[sd]`, `dict(sd)`.
_WRAPPERS = (cst.Dict, cst.DictElement, cst.List, cst.Tuple, cst.Element, cst.StarredDictElement, cst.Arg)


def writes_out(call: cst.Call, qualify) -> bool:
    """`torch.save(obj, p)`, `save_file(sd, p)`, `model.load_state_dict(sd)`: a call that takes an object over whole."""
    name = qualify(call.func) or ""
    if name in WRITERS:
        return True
    return isinstance(call.func, cst.Attribute) and not name and call.func.attr.value in _TAKING_METHODS


def hands_over(node: cst.CSTNode, parents: Sequence[cst.CSTNode], qualify) -> bool:
    """Whether this occurrence of a container passes the container itself out: it is returned, or is an
    argument of a writer (`torch.save({"model": sd}, p)`), possibly wrapped in a dict/list/tuple display
    or a copy (`dict(sd)`). `parents` are the ancestors of `node`, outermost first."""
    child: cst.CSTNode = node
    for parent in reversed(parents):
        if isinstance(parent, cst.Return):
            return parent.value is child
        if isinstance(parent, _WRAPPERS):
            child = parent
            continue
        if isinstance(parent, cst.Call) and any(arg is child for arg in parent.args):
            if writes_out(parent, qualify):
                return True
            if isinstance(parent.func, cst.Name) and parent.func.value in ("dict", "list") and not qualify(parent.func):
                child = parent  # a shallow copy of the container, still the same entries
                continue
        return False
    return False


STORE_METHODS = ("append", "insert", "setdefault", "update")
EVICT_METHODS = frozenset({"pop", "popitem", "popleft", "remove", "__delitem__"})
_HARMLESS_METHODS = frozenset({"keys", "__len__", "__contains__", "count", "index", "__iter__"})
_WHOLE_READ_METHODS = frozenset({"items", "values", "copy"})
# Tensor metadata that is the same wherever the tensor lives: reading it needs no move back.
METADATA_READS = frozenset({"shape", "dtype", "ndim", "size", "numel", "dim", "is_floating_point", "element_size"})
_HARMLESS_BUILTINS = frozenset({"len", "bool", "isinstance", "id", "type", "print", "repr", "str"})
# Methods that set a container up once; re-creating it empty anywhere else clears it.
SETUP_METHODS = frozenset({None, "__init__", "__post_init__"})

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
class ContainerKey:
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
class Store:
    container: ContainerKey
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
class Load:
    call: cst.Call
    functions: tuple[cst.FunctionDef, ...]
    owner: cst.ClassDef | None


@dataclass
class ContainerUse:
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
class LocalBinding:
    """A binding of a name in the scope's own body, as the container questions need it."""

    value: cst.BaseExpression | None  # the right-hand side (whole, for unpacking); None: not shown
    statement: cst.CSTNode  # the binding statement (assignment, loop, with-item, def...)


# Binding kinds of `model.names` that put a value the code shows into a name.
_VALUE_KINDS = frozenset({"assign", "unpack", "walrus"})
# Binding kinds that bind a name without showing its value (imports, `del`, `except ... as` are not
# counted: what a container question asks about is where a name gets data).
_OPAQUE_KINDS = frozenset({"augment", "for", "with", "def", "class"})


class LocalBindings:
    """One function's (or the module's) own bindings, read off `model.names`: parameters, the bindings of
    each other name with the value it receives, what each loop target iterates, and `global`/`nonlocal`
    names (which the scope does not bind itself)."""

    def __init__(self, scope: Scope | None) -> None:
        self.params: dict[str, cst.Param] = {}
        self.bindings: dict[str, list[LocalBinding]] = {}
        self.loop_iters: dict[str, cst.BaseExpression] = {}
        self.globals: set[str] = set()
        if scope is None:
            return
        self.globals = scope.declared_global | scope.declared_nonlocal
        for name, bindings in scope.bindings.items():
            for binding in bindings:
                self._add(name, binding)

    def _add(self, name: str, binding: Binding) -> None:
        if binding.kind == "param" and isinstance(binding.node, cst.Param):
            self.params[name] = binding.node
        elif binding.kind in _VALUE_KINDS:
            self.bindings.setdefault(name, []).append(LocalBinding(binding.value, binding.node))
        elif binding.kind in _OPAQUE_KINDS:
            self.bindings.setdefault(name, []).append(LocalBinding(None, binding.node))
            if binding.kind == "for" and binding.value is not None:
                self.loop_iters[name] = binding.value

    def binds_locally(self, name: str) -> bool:
        return name not in self.globals and (name in self.params or name in self.bindings)


def is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def names_own_class(node: cst.BaseExpression, owner: cst.ClassDef | None) -> bool:
    """`Cls` written inside the methods of `class Cls` (`Cls._cache[k] = v`): the class itself."""
    return owner is not None and isinstance(node, cst.Name) and node.value == owner.name.value


def owner_attribute(node: cst.BaseExpression, owner: cst.ClassDef | None) -> str | None:
    """`x` for `self.x`, or for `Cls.x` inside `class Cls` (a class attribute written through the class)."""
    if isinstance(node, cst.Attribute) and (is_self(node.value) or names_own_class(node.value, owner)):
        return node.attr.value
    return None


def self_attribute(node: cst.BaseExpression) -> str | None:
    """`x` for `self.x`."""
    if isinstance(node, cst.Attribute) and is_self(node.value):
        return node.attr.value
    return None


def single_index(node: cst.Subscript) -> cst.BaseExpression | None:
    """`k` for `c[k]` (not a slice, not several indices)."""
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return node.slice[0].slice.value
    return None


def reads_entry(use: ContainerUse, key: cst.BaseExpression) -> bool:
    """`c[key]` or `c.get(key, ...)`: a read of the entry stored under `key` (spelled the same way)."""
    parent = use.parents[-1] if use.parents else None
    if isinstance(parent, cst.Subscript) and parent.value is use.node:
        index = single_index(parent)
        return index is not None and code_of(index, 200) == code_of(key, 200)
    grand = use.parents[-2] if len(use.parents) > 1 else None
    if (
        isinstance(parent, cst.Attribute)
        and parent.attr.value == "get"
        and isinstance(grand, cst.Call)
        and grand.func is parent
        and grand.args
    ):
        return grand.args[0].keyword is None and code_of(grand.args[0].value, 200) == code_of(key, 200)
    return False


def mutates(entry: cst.CSTNode, parent: cst.CSTNode | None, grand: cst.CSTNode | None) -> bool:
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



# ----------------------------------------------------------------------------------------------
# container uses: every occurrence of the container in its owner, classified
# ----------------------------------------------------------------------------------------------
class UseWalker(cst.CSTVisitor):
    """Walks a class (for `self.X` containers) or the module (for module-level ones) once."""

    def __init__(
        self, model: "Containers", owner: cst.ClassDef | cst.FunctionDef | cst.Module, names: set[str]
    ) -> None:
        super().__init__()
        self.model = model
        self.owner = owner
        self.names = names
        # containers named by a plain variable (module-level or function-local) rather than `self.<name>`
        self.module_level = not isinstance(owner, cst.ClassDef)
        self.stack: list[cst.CSTNode] = []
        self.functions: list[cst.FunctionDef] = []
        self.shadowed: list[set[str]] = []
        self.uses: dict[str, list[ContainerUse]] = {name: [] for name in names}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.ClassDef) and node is not self.owner and not self.module_level:
            return False
        if isinstance(node, cst.FunctionDef):
            self.functions.append(node)
            if self.module_level:
                facts = self.model.facts(node)
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
        if isinstance(node, cst.Attribute) and node.attr.value in self.names:
            if is_self(node.value) or names_own_class(node.value, self.owner):  # type: ignore[arg-type]
                self._classify(node, node.attr.value)

    def _method(self) -> str | None:
        return self.functions[0].name.value if self.functions else None

    def _add(self, name: str, node: cst.BaseExpression, kind: str, **extra) -> None:
        in_loop = any(isinstance(ancestor, (cst.For, cst.While)) for ancestor in self.stack)
        self.uses[name].append(
            ContainerUse(node, kind, tuple(self.stack), self._method(), tuple(self.functions), in_loop=in_loop, **extra)
        )

    def _parent(self, depth: int) -> cst.CSTNode | None:
        return self.stack[-depth] if len(self.stack) >= depth else None

    def _inside_torch_save(self) -> bool:
        return any(
            isinstance(ancestor, cst.Call) and (self.model.qualified_name(ancestor.func) or "") == "torch.save"
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
            elif single_index(parent) is None:
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
                elif method in METADATA_READS:
                    self._add(name, node, "meta")
                elif method == "clone" and not great.args:
                    self._add(name, node, "read", rewrite=great)
                elif mutates(parent, grand, great):
                    self._add(name, node, "mutate")
                else:
                    self._add(name, node, "read", rewrite=parent)
            elif isinstance(grand, cst.Attribute) and grand.value is parent and grand.attr.value in METADATA_READS:
                self._add(name, node, "meta")  # `c[k].shape`: the same on any device
            elif mutates(parent, grand, great):
                self._add(name, node, "mutate")
            else:
                self._add(name, node, "read", rewrite=parent)
            return
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if not (isinstance(grand, cst.Call) and grand.func is parent):
                self._add(name, node, "unfixable")
                return
            method = parent.attr.value
            if method in STORE_METHODS or method in ("extend", "__setitem__"):
                used = not isinstance(great, cst.Expr)
                self._add(name, node, "unfixable" if method == "setdefault" and used else "store", payload=grand)
            elif method == "clear":
                self._add(name, node, "clear")
            elif method in EVICT_METHODS:
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
        kind = self.model.empty_container_kind(value)
        if kind is not None:
            self._add(name, node, "empty", payload=value)
        else:
            self._add(name, node, "rebind", payload=value)



# ----------------------------------------------------------------------------------------------
# the model part
# ----------------------------------------------------------------------------------------------
class Containers(cst.BatchableCSTVisitor):
    """The long-lived containers of one file, recorded in the engine's traversal; query after it."""

    def __init__(self, imports: ImportTracker, steps: StepIndex, names: Names) -> None:
        super().__init__()
        self.imports = imports
        self.steps = steps
        self.names = names
        self.module: cst.Module | None = None
        # classes and functions in one stack, not the shared tracker's two: a store or load asks which
        # functions sit inside the innermost class, and whether the innermost definition is a class body
        self.scopes: list[cst.ClassDef | cst.FunctionDef] = []
        self.loops: list[cst.For | cst.While] = []
        self.grad_off: list[bool] = [False]
        self.module_containers: dict[str, set[str]] = {}  # name -> kinds it is created as
        self.function_containers: dict[tuple[cst.FunctionDef, str], set[str]] = {}
        self.function_definitions: dict[tuple[cst.FunctionDef, str], list[cst.CSTNode]] = {}
        self.class_containers: dict[cst.ClassDef, dict[str, set[str]]] = {}
        self.class_body_definitions: dict[tuple[cst.ClassDef, str], list[cst.CSTNode]] = {}
        # (class, attribute) -> the methods that mention `self.<attribute>`
        # in source order (a dict, not a set: the uses of a container are walked in this order)
        self.occurrences: dict[tuple[cst.ClassDef, str], dict[cst.FunctionDef, None]] = {}
        self.class_methods: dict[cst.ClassDef, set[str]] = {}
        self.device_attributes: dict[cst.ClassDef, list[str]] = {}  # `self.device = ...`
        self.stores: list[Store] = []
        self.loads: list[Load] = []  # every `torch.load(...)`
        self.hook_names: set[str] = set()  # what is registered as a hook
        self.foreign_attributes: set[str] = set()  # attributes read on something other than `self`
        self.attribute_values: dict[str, list[cst.BaseExpression | None]] = {}  # `self.<name> = value`
        self._facts: dict[int, LocalBindings] = {}
        # recorded in the traversal so the queries below never walk a function again
        self.loop_functions: dict[cst.CSTNode, tuple[cst.CSTNode, ...]] = {}  # loop -> enclosing functions
        self.definition_loops: dict[int, tuple[cst.CSTNode, ...]] = {}  # id(definition) -> enclosing loops
        self.loops_with_backward: set[cst.CSTNode] = set()
        self.loops_with_update: set[cst.CSTNode] = set()

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualify(node)

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
        self.loop_functions[node] = tuple(s for s in self.scopes if isinstance(s, cst.FunctionDef))
        self.loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loop_functions[node] = tuple(s for s in self.scopes if isinstance(s, cst.FunctionDef))
        self.loops.append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        owner = self._enclosing_class()
        if not is_self(node.value):
            self.foreign_attributes.add(node.attr.value)  # `Cls.x` too: the fix only rewrites `self.x`
            if not names_own_class(node.value, owner):
                return
        functions = self._functions_in_owner()
        if functions and owner is not None:
            self.occurrences.setdefault((owner, node.attr.value), {})[functions[0]] = None

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record_definition(target.target, node.value, node)
            if isinstance(target.target, cst.Subscript):
                index = single_index(target.target)
                if index is not None:
                    self._record_store(
                        target.target.value, node, node.value, index, "setitem", shared=len(node.targets) > 1
                    )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record_definition(node.target, node.value, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.loops and isinstance(func, cst.Attribute):
            # a training loop runs backward and an optimizer update: `loss.backward()` plus
            # `opt.step()`/`zero_grad()` (a sampler's `scheduler.step(noise, t, x)` takes arguments)
            method = func.attr.value
            if method == "backward":
                self.loops_with_backward.update(self.loops)
            elif method == "zero_grad" or (method == "step" and not node.args):
                self.loops_with_update.update(self.loops)
        if (self.qualified_name(func) or "") == "torch.load":
            self.loads.append(Load(node, self._functions_in_owner(), self._enclosing_class()))
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
            self._record_store(receiver.value, node, positional[0], single_index(receiver), "nested-append")
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
        attribute = self_attribute(target)
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
                self.definition_loops[id(statement)] = tuple(self.loops)
            elif isinstance(self.scopes[-1], cst.ClassDef):
                self.class_containers.setdefault(self.scopes[-1], {}).setdefault(target.value, set()).add(kind)
                self.class_body_definitions.setdefault((self.scopes[-1], target.value), []).append(statement)
        elif attribute is not None and owner is not None:
            self.class_containers.setdefault(owner, {}).setdefault(attribute, set()).add(kind)

    def _record_attribute_values(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """Every value assigned to `self.<name>` in the module (None where unpacking hides it)."""
        attribute = self_attribute(target)
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
        owner = self._enclosing_class()
        attribute = owner_attribute(receiver, owner)
        if attribute is not None:
            if owner is None:
                return
            container = ContainerKey(owner, attribute)
            functions = self._functions_in_owner()
        elif isinstance(receiver, cst.Name):
            functions = tuple(scope for scope in self.scopes if isinstance(scope, cst.FunctionDef))
            # the innermost function that created a container of that name, else the module's
            owner = next((f for f in reversed(functions) if (f, receiver.value) in self.function_containers), None)
            container = ContainerKey(owner, receiver.value)
        else:
            return
        self.stores.append(
            Store(
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

    def facts(self, scope: cst.FunctionDef | cst.Module) -> "LocalBindings":
        """What one function (or the module) binds itself, as `model.names` records it."""
        cached = self._facts.get(id(scope))
        if cached is None:
            cached = self._facts[id(scope)] = LocalBindings(self.names.scopes.get(scope))
        return cached

    # --- queries ------------------------------------------------------------------------------
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

    def uses(self, containers: Iterable[ContainerKey]) -> dict[ContainerKey, list[ContainerUse]]:
        """Every occurrence of these containers in their owners, classified (see `ContainerUse.kind`).
        Walks each owner once (of a class, only the methods that mention the containers)."""
        owners: dict[cst.ClassDef | cst.FunctionDef | None, dict[str, None]] = {}  # ordered: roots are walked in this order
        for container in containers:
            owners.setdefault(container.owner, {})[container.name] = None
        result: dict[ContainerKey, list[ContainerUse]] = {}
        for owner, names in owners.items():
            if not isinstance(owner, cst.ClassDef):
                root = owner if owner is not None else self.module
                assert root is not None
                walker = UseWalker(self, root, set(names))
                visit_readonly(root, walker)
            else:
                # only the methods that mention the containers, and their class-body definitions
                walker = UseWalker(self, owner, set(names))
                roots: list[cst.CSTNode] = []
                for name in names:
                    roots.extend(self.class_body_definitions.get((owner, name), ()))
                    roots.extend(self.occurrences.get((owner, name), ()))
                for root in dict.fromkeys(roots):
                    visit_readonly(root, walker)
            for name in names:
                result[ContainerKey(owner, name)] = walker.uses[name]
        return result

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



def stored_values(payload: cst.BaseExpression, container: cst.BaseExpression) -> list[cst.BaseExpression | None]:
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
