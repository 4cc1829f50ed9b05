"""Which classes are torch modules (`nn.Module` subclasses), and what kind of object an expression holds.

A class is a module when one of its bases is: `torch.nn.Module` or any other `torch.nn` class
(`nn.Sequential`, `nn.Linear`), a framework's module class (Lightning's `LightningModule`, Hugging Face's
`PreTrainedModel`), a class of the same file that is one, or a class of another scanned file that is one
(the project index's `lineage`, one file away or more). A class is *not* a module when every base is known
and none is: no bases, `object`, a dataclass, `abc.ABC`... A base the analysis cannot follow (a library
class outside the tree, a name bound two ways) leaves it unknown, never proof either way.

`kind_of(expr)` says what an expression holds as far as that decides a torch question: "module" (built
from a module class, the `self` of a module class's method, `super()` there, or treated as one by the
file: `modules` part), "optimizer" (built by a `torch.optim` class), "other" (an instance of a class shown not to be a
module), or None (unknown). `holds(expr)` says what one element of a container is: "module" (built from a
module class, also moved: `nn.Linear(d, d).to(dev)`), "parameter" (`nn.Parameter(...)`) or None;
`fresh_tensor(expr)` whether it is a tensor a torch factory builds, `trainable_tensor(expr)` one made to
require grad there (`torch.randn(n, requires_grad=True)`, `.requires_grad_()`, `Variable(..., requires_grad=True)`).

`forward_reach(function)` says which module class's `forward` runs a function: the `forward` itself,
another method or a module-level function of the file that it calls (`self.encode(x)`, `drop(h)`), up to
`MAX_DEPTH` calls deep (SF205, SF207, SF414). `forward_reach(function, every_call=True)` leaves out what only a
lazy initialisation runs (`if self.cache is None: self.cache = self.build()`: `source/lazy_inits.py`), once per
object and not on every call of `forward` (SF205, SF207: a per-call cost). The part is built by the model (`classes`); a rule may also build
one over its `names` (`ModuleClasses(names, project)`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.modules import ModuleIndex, chain_receiver
from stabfix.model.source.lazy_inits import LazyInits
from stabfix.model.source.names import Names
from stabfix.model.source.project_view import ProjectQueries
from stabfix.model.source.syntax import DEFINITIONS
from stabfix.model.source.node_fields import code_children

MAX_DEPTH = 3  # calls followed from a `forward` (`forward_reach`)
# Framework classes that are `nn.Module`s, by qualified name (their own packages' spellings).
FRAMEWORK_MODULES = frozenset(
    {
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)
# `torch.nn` names that are not module classes: tensors, a namespace of functions, helpers.
_TORCH_NN_NOT_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})
# Bases that say nothing about being a module: a plain Python class.
PLAIN_BASES = frozenset({"object", "abc.ABC", "typing.Generic", "typing.NamedTuple", "enum.Enum", "typing.Protocol"})
_MAX_DEPTH = 8
# torch functions that build a fresh tensor
FRESH_TENSOR_FUNCTIONS = frozenset({"zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "Tensor",
                              "FloatTensor", "eye", "arange", "linspace", "zeros_like", "ones_like", "randn_like",
                              "rand_like", "empty_like", "full_like", "as_tensor", "from_numpy"})


def is_torch_module_name(qualified: str) -> bool:
    """`torch.nn.Module`, `torch.nn.Linear`, `torch.nn.modules.conv.Conv2d`, a framework module class."""
    if qualified in FRAMEWORK_MODULES:
        return True
    if not qualified.startswith("torch.nn.") or qualified.startswith(
            ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parameter.")):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last[:1].isupper() and last not in _TORCH_NN_NOT_MODULES


class ModuleClasses:
    """Ask after the traversal: `class_kind`/`is_module_class(class_def)`, `kind_of(expr)`, `holds(expr)`,
    `forward_reach(function_def)`."""

    def __init__(self, names: Names, project: Optional[ProjectQueries] = None, modules: Optional[ModuleIndex] = None) -> None:
        self.names = names
        self.modules = modules
        self.project = project
        self._kinds: dict[int, Optional[str]] = {}
        self._reach: Optional[dict[int, cst.ClassDef]] = None
        self._every_call_reach: Optional[dict[int, cst.ClassDef]] = None
        self.lazy_inits = LazyInits(names)

    # -- classes ------------------------------------------------------------------------------------
    def is_module_class(self, node: cst.ClassDef) -> bool:
        return self.class_kind(node) == "module"

    def owner_of(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class a function is a method of (None for a module-level or nested function)."""
        scope = self.names.scopes.get(function)
        parent = scope.parent if scope is not None else None
        return parent.node if parent is not None and parent.is_class else None  # type: ignore[return-value]

    def forward_reach(self, function: cst.FunctionDef, every_call: bool = False) -> Optional[cst.ClassDef]:
        """The module class whose `forward` runs `function` (itself, or a function of the file it calls); with
        `every_call`, only where it runs on every call, not only under a lazy initialisation."""
        reach = self._every_call_reach if every_call else self._reach
        if reach is None:
            reach = {}
            for scope_node in list(self.names.scopes):
                if type(scope_node) is cst.ClassDef and self.is_module_class(scope_node):
                    for item in _methods(scope_node):
                        if item.name.value == "forward":
                            self._collect(item, scope_node, 0, reach, every_call)
            if every_call:
                self._every_call_reach = reach
            else:
                self._reach = reach
        return reach.get(id(function))

    def _collect(self, function: cst.FunctionDef, owner: cst.ClassDef, depth: int, reach: dict[int, cst.ClassDef],
                 every_call: bool) -> None:
        if id(function) in reach or depth > MAX_DEPTH:
            return
        reach[id(function)] = owner
        once = {id(block) for block in self.lazy_inits.once_blocks(function)} if every_call else set()
        stack: list[cst.CSTNode] = [function.body]
        while stack:
            node = stack.pop()
            kind = type(node)  # exact types (see node_fields.node_kinds)
            if kind in DEFINITIONS:
                continue  # a nested definition runs only when called
            if kind is cst.Call:
                callee = self.names.definition_of(node)
                if callee is not None:
                    self._collect(callee, owner, depth + 1, reach, every_call)
            if id(node) in once:
                stack.extend(part for part in (node.test, node.orelse) if part is not None)  # type: ignore[attr-defined]
                continue  # the body runs on the first call only
            stack.extend(code_children(node))  # trivia holds no call

    def class_kind(self, node: cst.ClassDef, depth: int = 0) -> Optional[str]:
        """"module", "other" (every base known, none a module) or None (a base not known)."""
        key = id(node)
        if key not in self._kinds:
            self._kinds[key] = None  # a class that names itself as a base (never valid Python): unknown
            self._kinds[key] = self._class_kind(node, depth)
        return self._kinds[key]

    def _class_kind(self, node: cst.ClassDef, depth: int) -> Optional[str]:
        kinds = [self.base_kind(arg.value, depth) for arg in node.bases if arg.keyword is None]
        if "module" in kinds:
            return "module"
        return None if None in kinds else "other"

    def base_kind(self, base: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        if depth > _MAX_DEPTH:
            return None
        if type(base) is cst.Subscript:  # `Generic[T]`, `Base[T]`
            base = base.value
        if type(base) is cst.Name and base.value == "object":
            return "other"
        local = self._local_class(base)
        if local is not None:
            return self.class_kind(local, depth + 1)
        qualified = self.names.qualify(base)
        return self.qualified_kind(qualified) if qualified is not None else None

    def qualified_kind(self, qualified: str) -> Optional[str]:
        """What a class named through this file's imports is: torch's, a framework's or another file's."""
        if is_torch_module_name(qualified):
            return "module"
        if qualified in PLAIN_BASES or qualified.startswith("torch.optim."):
            return "other"
        if self.project is None:
            return None
        try:
            if self.project.resolve(qualified) is None:
                return None
            lineage = self.project.lineage(qualified)
        except Exception:  # another file the index cannot read is unknown, never proof
            return None
        outside = [name for name, methods in lineage if methods is None]
        if any(is_torch_module_name(name) for name in outside):
            return "module"
        return "other" if all(name in PLAIN_BASES for name in outside) and len(lineage) >= 1 else None

    def _local_class(self, expr: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class of this file a name is bound to (one binding, a `class` statement)."""
        if type(expr) is not cst.Name:
            return None
        bindings = self.names.bindings_of(expr) or self.names._module_bindings(expr.value)
        if len(bindings) == 1 and bindings[0].kind == "class" and type(bindings[0].node) is cst.ClassDef:
            return bindings[0].node
        return None

    def constructed_kind(self, call: cst.Call) -> Optional[str]:
        """What a call builds when it calls a class: `nn.Linear(...)`, `Net()`, `pkg.Block(...)`."""
        local = self._local_class(call.func)
        if local is not None:
            return self.class_kind(local)
        qualified = self.names.qualify(call.func)
        if qualified is None:
            return None
        if qualified.startswith("torch.optim.") and qualified.rsplit(".", 1)[-1][:1].isupper():
            return "optimizer"
        return self.qualified_kind(qualified)

    def holds(self, element: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """"module" for a module built from a module class (`nn.Linear(d, d).to(dev)`, `Block(d)`, a name bound
        to one), "parameter" for an `nn.Parameter(...)`, else None."""
        if depth > 4:
            return None
        element = chain_receiver(element)  # `nn.Linear(d, d).to(device)`
        if type(element) is cst.Call:
            qualified = self.names.qualify(element.func) or ""
            if qualified == "torch.nn.Parameter":
                return "parameter"
            return "module" if self.constructed_kind(element) == "module" else None
        if type(element) is cst.Name:
            values = [b.bound_value for b in self.names.reaching(element)]
            kinds = {self.holds(v, depth + 1) if v is not None else None for v in values}
            return kinds.pop() if len(kinds) == 1 else None
        return None

    def trainable_tensor(self, value: cst.BaseExpression) -> bool:
        """`torch.randn(n, requires_grad=True)`, `torch.zeros(n).requires_grad_()`, `Variable(t, requires_grad=True)`."""
        if type(value) is not cst.Call:
            return False
        if type(value.func) is cst.Attribute and value.func.attr.value == "requires_grad_":
            return (not value.args or _is_true(value.args[0].value)) and self.fresh_tensor(value.func.value)
        qualified = self.names.qualify(value.func) or ""
        return (qualified.startswith("torch.autograd.") and qualified.endswith("Variable") or self.fresh_tensor(value)) \
            and any(a.keyword is not None and a.keyword.value == "requires_grad" and _is_true(a.value) for a in value.args)

    def fresh_tensor(self, value: cst.BaseExpression) -> bool:
        """`torch.randn(...)`, `torch.zeros(n).to(device)`: a fresh tensor."""
        root = chain_receiver(value)
        qualified = self.names.qualify(root.func) or "" if type(root) is cst.Call else ""
        return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in FRESH_TENSOR_FUNCTIONS

    # -- instances ----------------------------------------------------------------------------------
    def kind_of(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """What `expr` holds: "module", "optimizer", "other" or None."""
        if depth > _MAX_DEPTH:
            return None
        expr = chain_receiver(expr)  # `model.to(device)`, `net.cuda().eval()`: the module itself
        if type(expr) is cst.Call:
            if type(expr.func) is cst.Name and expr.func.value == "super":
                owner = self._method_owner(expr)
                return "module" if owner is not None and self.is_module_class(owner) else None
            return self.constructed_kind(expr)
        if type(expr) is cst.Name:
            owner = self._receiver_class(expr)
            if owner is not None:
                return self.class_kind(owner)
            kinds = {self._binding_kind(b, depth) for b in self.names.reaching(expr)}
            if len(kinds) == 1 and (kind := kinds.pop()) is not None:
                return kind
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            owner = self._receiver_class(expr.value)
            if owner is not None:
                kinds = {self._binding_kind(b, depth) for b in self.names.attribute_bindings(owner, expr.attr.value)}
                if len(kinds) == 1 and (kind := kinds.pop()) is not None:
                    return kind
        if self.modules is not None and self.modules.is_module(expr):
            return "module"
        return None

    def _binding_kind(self, binding, depth: int) -> Optional[str]:
        value = binding.bound_value
        return self.kind_of(value, depth + 1) if value is not None else None

    def _receiver_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        """The class whose method `name` is the receiver (first parameter) of, not re-bound."""
        bindings = self.names.bindings_of(name)
        if len(bindings) != 1 or bindings[0].kind != "param":
            return None
        function = bindings[0].scope.node
        if type(function) is not cst.FunctionDef or bindings[0].scope.parent is None:
            return None
        params = list(function.params.posonly_params) + list(function.params.params)
        if not params or params[0].name.value != name.value or not bindings[0].scope.parent.is_class:
            return None
        if any(_decorator_name(d) == "staticmethod" for d in function.decorators):
            return None
        return bindings[0].scope.parent.node  # type: ignore[return-value]

    def _method_owner(self, node: cst.CSTNode) -> Optional[cst.ClassDef]:
        scope = self.names.scope_of(node) if type(node) is cst.Name else None
        if scope is None and type(node) is cst.Call and type(node.func) is cst.Name:
            scope = self.names.scope_of(node.func)
        while scope is not None and not scope.is_function:
            scope = scope.parent
        if scope is None or scope.parent is None or not scope.parent.is_class:
            return None
        return scope.parent.node  # type: ignore[return-value]


def _decorator_name(decorator: cst.Decorator) -> str:
    value = decorator.decorator
    return value.value if type(value) is cst.Name else ""


def _is_true(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "True"


def _methods(node: cst.ClassDef) -> list[cst.FunctionDef]:
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    return [item for item in body if type(item) is cst.FunctionDef]
