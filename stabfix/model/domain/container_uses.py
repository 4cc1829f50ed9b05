"""The records of long-lived containers (where each is stored into, loaded, used) and the
classification of every occurrence of one in its owner: store, read, get, evict, clear, re-creation,
hand-over... (`UseWalker`, run by `Containers.uses`). Part of the `containers` part: `containers.py`
records in the traversal, `container_roles.py` says what the records mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import libcst as cst

from stabfix.model.source.names import Binding, Scope
from stabfix.model.source.syntax import code_of
from stabfix.model.training.step_frames import Frame


class OwnerFacts(Protocol):
    """What the use walker asks of the `containers` part that runs it."""

    def facts(self, scope: cst.FunctionDef | cst.Module) -> "LocalBindings": ...

    def qualified_name(self, node: cst.BaseExpression) -> str | None: ...

    def empty_container_kind(self, value: cst.BaseExpression) -> str | None: ...

    def receiver_handed(self, call: cst.Call, receiver: str, names: set[str],
                        owner: cst.ClassDef) -> dict[str, list[str]] | None:
        """What a function the owner's instance is handed to does with the containers (`helper(self)`:
        the kinds of its uses of `<param>.<name>`), or None when the call runs nothing that can be read."""
        ...


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
    return type(call.func) is cst.Attribute and not name and call.func.attr.value in _TAKING_METHODS


def hands_over(node: cst.CSTNode, parents: Sequence[cst.CSTNode], qualify) -> bool:
    """Whether this occurrence of a container passes the container itself out: it is returned, or is an
    argument of a writer (`torch.save({"model": sd}, p)`), possibly wrapped in a dict/list/tuple display
    or a copy (`dict(sd)`). `parents` are the ancestors of `node`, outermost first."""
    child: cst.CSTNode = node
    for parent in reversed(parents):
        if type(parent) is cst.Return:
            return parent.value is child
        if isinstance(parent, _WRAPPERS):
            child = parent
            continue
        if type(parent) is cst.Call and any(arg is child for arg in parent.args):
            if writes_out(parent, qualify):
                return True
            if type(parent.func) is cst.Name and parent.func.value in ("dict", "list") and not qualify(parent.func):
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
        return type(self.owner) is cst.ClassDef

    def display(self) -> str:
        if type(self.owner) is cst.ClassDef:
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
        if binding.kind == "param" and type(binding.node) is cst.Param:
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
    return type(node) is cst.Name and node.value == "self"


def names_own_class(node: cst.BaseExpression, owner: cst.ClassDef | None) -> bool:
    """`Cls` written inside the methods of `class Cls` (`Cls._cache[k] = v`): the class itself."""
    return owner is not None and type(node) is cst.Name and node.value == owner.name.value


def owner_attribute(node: cst.BaseExpression, owner: cst.ClassDef | None) -> str | None:
    """`x` for `self.x`, or for `Cls.x` inside `class Cls` (a class attribute written through the class)."""
    if type(node) is cst.Attribute and (is_self(node.value) or names_own_class(node.value, owner)):
        return node.attr.value
    return None


def self_attribute(node: cst.BaseExpression) -> str | None:
    """`x` for `self.x`."""
    if type(node) is cst.Attribute and is_self(node.value):
        return node.attr.value
    return None


def single_index(node: cst.Subscript) -> cst.BaseExpression | None:
    """`k` for `c[k]` (not a slice, not several indices)."""
    if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        return node.slice[0].slice.value
    return None


def reads_entry(use: ContainerUse, key: cst.BaseExpression) -> bool:
    """`c[key]` or `c.get(key, ...)`: a read of the entry stored under `key` (spelled the same way)."""
    parent = use.parents[-1] if use.parents else None
    if type(parent) is cst.Subscript and parent.value is use.node:
        index = single_index(parent)
        return index is not None and code_of(index, 200) == code_of(key, 200)
    grand = use.parents[-2] if len(use.parents) > 1 else None
    if (
        type(parent) is cst.Attribute
        and parent.attr.value == "get"
        and type(grand) is cst.Call
        and grand.func is parent
        and grand.args
    ):
        return grand.args[0].keyword is None and code_of(grand.args[0].value, 200) == code_of(key, 200)
    return False


def mutates(entry: cst.CSTNode, parent: cst.CSTNode | None, grand: cst.CSTNode | None) -> bool:
    """Whether the code writes into a cache entry it read (`e.mul_(d)`, `e[i] = v`, `e.data = t`, `e += 1`):
    a copy moved to another device would take the write instead of the cached tensor."""
    if type(parent) is cst.AugAssign and parent.target is entry:
        return True
    if type(parent) is cst.Attribute and parent.value is entry:
        method = parent.attr.value
        if type(grand) is cst.Call and grand.func is parent and method.endswith("_") and not method.endswith("__"):
            return True
        return type(grand) in (cst.AssignTarget, cst.AugAssign)
    if type(parent) is cst.Subscript and parent.value is entry:
        return type(grand) in (cst.AssignTarget, cst.AugAssign)
    return type(parent) is cst.Arg and parent.keyword is not None and parent.keyword.value == "out"


# ----------------------------------------------------------------------------------------------
# container uses: every occurrence of the container in its owner, classified
# ----------------------------------------------------------------------------------------------
class UseWalker(cst.CSTVisitor):
    """Walks a class (for `self.X` containers) or the module (for module-level ones) once."""

    def __init__(
        self, model: OwnerFacts, owner: cst.ClassDef | cst.FunctionDef | cst.Module, names: set[str],
        receiver: str = "self",
    ) -> None:
        super().__init__()
        self.model = model
        self.owner = owner
        self.names = names
        # the name the owner's instance has where this walker looks: `self` in its methods, the
        # parameter it is handed to in a function it is passed to (`helper_1(self)`)
        self.receiver = receiver
        # containers named by a plain variable (module-level or function-local) rather than `self.<name>`
        self.module_level = type(owner) is not cst.ClassDef
        self.stack: list[cst.CSTNode] = []
        self.functions: list[cst.FunctionDef] = []
        self.shadowed: list[set[str]] = []
        self.uses: dict[str, list[ContainerUse]] = {name: [] for name in names}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) is cst.ClassDef and node is not self.owner and not self.module_level:
            return False
        if type(node) is cst.FunctionDef:
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
        if type(original_node) is cst.FunctionDef:
            self.functions.pop()
            if self.module_level:
                self.shadowed.pop()

    def _inspect(self, node: cst.CSTNode) -> None:
        if self.module_level:
            if type(node) is not cst.Name or node.value not in self.names:
                return
            parent = self.stack[-1] if self.stack else None
            if type(parent) is cst.Attribute and parent.attr is node:
                return
            if type(parent) in (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.NameItem, cst.ImportAlias, cst.AsName):
                if not (type(parent) is cst.Arg and parent.value is node):
                    return
            if any(node.value in shadow for shadow in self.shadowed):
                return
            self._classify(node, node.value)
            return
        if type(node) is cst.Name and node.value in self.names and not self.functions:
            # a class attribute: `_cache = {}` / `_cache: dict = {}` in the class body
            parent = self.stack[-1] if self.stack else None
            if type(parent) is cst.AssignTarget and parent.target is node:
                self._assignment(node.value, node, self.stack[-2].value)  # type: ignore[attr-defined]
            elif type(parent) is cst.AnnAssign and parent.target is node and parent.value is not None:
                self._assignment(node.value, node, parent.value)
            return
        if type(node) is cst.Attribute and node.attr.value in self.names:
            receiver = type(node.value) is cst.Name and node.value.value == self.receiver
            if receiver or names_own_class(node.value, self.owner):  # type: ignore[arg-type]
                self._classify(node, node.attr.value)
        elif type(node) is cst.Call and self.functions and type(self.owner) is cst.ClassDef and any(
                type(arg.value) is cst.Name and arg.value.value == self.receiver for arg in node.args):
            # the instance handed to a function (`helper_1(self)`): what that function does to the
            # containers through it happens here, at the call
            handed = self.model.receiver_handed(node, self.receiver, self.names, self.owner)
            for name, kinds in (handed or {}).items():
                for kind in kinds:
                    self._add(name, node, kind)

    def _method(self) -> str | None:
        return self.functions[0].name.value if self.functions else None

    def _add(self, name: str, node: cst.BaseExpression, kind: str, **extra) -> None:
        in_loop = any(type(ancestor) in (cst.For, cst.While) for ancestor in self.stack)
        self.uses[name].append(
            ContainerUse(node, kind, tuple(self.stack), self._method(), tuple(self.functions), in_loop=in_loop, **extra)
        )

    def _parent(self, depth: int) -> cst.CSTNode | None:
        return self.stack[-depth] if len(self.stack) >= depth else None

    def _inside_torch_save(self) -> bool:
        return any(
            type(ancestor) is cst.Call and (self.model.qualified_name(ancestor.func) or "") == "torch.save"
            for ancestor in self.stack
        )

    def _classify(self, node: cst.BaseExpression, name: str) -> None:  # noqa: C901 - one case per syntax
        parent = self._parent(1)
        grand = self._parent(2)
        great = self._parent(3)
        if type(parent) is cst.Subscript and parent.value is node:
            if type(grand) is cst.AssignTarget:
                statement = self._parent(3)
                self._add(name, node, "store", payload=getattr(statement, "value", None))
            elif any(type(ancestor) is cst.Del for ancestor in self.stack):
                self._add(name, node, "evict")
            elif type(grand) is cst.AugAssign and grand.target is parent:
                self._add(name, node, "mutate")
            elif single_index(parent) is None:
                self._add(name, node, "unfixable")
            elif (
                type(grand) is cst.Attribute
                and grand.value is parent
                and type(great) is cst.Call
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
                elif method in ("clear", "pop", "popitem"):
                    self._add(name, node, "evict")  # `c[layer].clear()`: the entries of an entry are freed
                elif mutates(parent, grand, great):
                    self._add(name, node, "mutate")
                else:
                    self._add(name, node, "read", rewrite=parent)
            elif type(grand) is cst.Attribute and grand.value is parent and grand.attr.value in METADATA_READS:
                self._add(name, node, "meta")  # `c[k].shape`: the same on any device
            elif type(grand) is cst.Subscript and grand.value is parent and type(great) is cst.AssignTarget:
                self._add(name, node, "nested-store")  # `c[layer][sid] = f`: a new entry in an entry (a nested dict)
            elif mutates(parent, grand, great):
                self._add(name, node, "mutate")
            else:
                self._add(name, node, "read", rewrite=parent)
            return
        if type(parent) is cst.Attribute and parent.value is node:
            if not (type(grand) is cst.Call and grand.func is parent):
                self._add(name, node, "unfixable")
                return
            method = parent.attr.value
            if method in STORE_METHODS or method in ("extend", "__setitem__"):
                used = type(great) is not cst.Expr
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
        if type(parent) is cst.ComparisonTarget and parent.comparator is node:
            self._add(name, node, "lookup" if type(parent.operator) in (cst.In, cst.NotIn) else "safe")
            return
        if type(parent) is cst.Comparison and parent.left is node:
            self._add(name, node, "safe")
            return
        if type(parent) is cst.AssignTarget and parent.target is node:
            self._assignment(name, node, grand.value)  # type: ignore[union-attr]
            return
        if type(parent) is cst.AnnAssign and parent.target is node:
            if parent.value is None:
                self._add(name, node, "safe")
            else:
                self._assignment(name, node, parent.value)
            return
        if type(parent) is cst.Arg and type(grand) is cst.Call:
            callee = grand.func.value if type(grand.func) is cst.Name else ""
            if callee in _HARMLESS_BUILTINS or self._inside_torch_save():
                self._add(name, node, "safe")
            else:
                self._add(name, node, "unfixable")
            return
        if type(parent) in (cst.If, cst.While, cst.IfExp) and parent.test is node:
            self._add(name, node, "safe")
            return
        if type(parent) in (cst.UnaryOperation, cst.BooleanOperation):
            self._add(name, node, "safe")
            return
        if type(parent) is cst.Global:
            return
        if type(parent) is cst.NameItem:
            return
        if type(parent) in (cst.For, cst.CompFor) and parent.iter is node:
            self._add(name, node, "iterate")
            return
        self._add(name, node, "safe" if self._inside_torch_save() else "unfixable")

    def _assignment(self, name: str, node: cst.BaseExpression, value: cst.BaseExpression) -> None:
        kind = self.model.empty_container_kind(value)
        if kind is not None:
            self._add(name, node, "empty", payload=value)
        else:
            self._add(name, node, "rebind", payload=value)
