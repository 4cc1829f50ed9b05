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

This module records in the traversal; the records and the classification of each use are in
`container_uses.py`, the questions over them (`ContainerRoles`) in `container_roles.py`.
"""

from __future__ import annotations

from typing import Callable, Iterable

import libcst as cst

from stabfix.model.domain.container_roles import ContainerRoles
from stabfix.model.domain.container_uses import (
    ContainerKey,
    ContainerUse,
    Load,
    LocalBindings,
    Store,
    UseWalker,
    is_self,
    names_own_class,
    owner_attribute,
    self_attribute,
    single_index,
)
from stabfix.model.calls.devices import is_grad_disabling_context
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.project_view import ProjectQueries
from stabfix.model.source.syntax import names_in
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.training.structure import StepIndex

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
# the model part
# ----------------------------------------------------------------------------------------------
class Containers(ContainerRoles, cst.BatchableCSTVisitor):
    """The long-lived containers of one file, recorded in the engine's traversal; query after it
    (the questions are `ContainerRoles`')."""

    def __init__(self, imports: ImportTracker, steps: StepIndex, names: Names,
                 project: ProjectQueries | None = None) -> None:
        super().__init__()
        self.imports = imports
        self.steps = steps
        self.names = names
        self.project = project  # the other files of the scan: a function of theirs the instance is handed to
        self._handing: set[int] = set()  # functions being walked for a handed instance (recursion guard)
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
        self.self_attributes: dict[cst.ClassDef, dict[str, None]] = {}  # `self.<attr> = ...` in source order
        self.stores: list[Store] = []
        self.loads: list[Load] = []  # every `torch.load(...)`
        self.calls: list[cst.Call] = []  # every call: what the file's calls pass for a storing function's key
        self.calls_in_loops: set[cst.Call] = set()  # the calls inside a `for`/`while` loop
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
        if self.scopes and type(self.scopes[-1]) is cst.ClassDef:
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
        self.loop_functions[node] = tuple(s for s in self.scopes if type(s) is cst.FunctionDef)
        self.loops.append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loop_functions[node] = tuple(s for s in self.scopes if type(s) is cst.FunctionDef)
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
            if type(target.target) is cst.Subscript:
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
        self.calls.append(node)
        if self.loops:
            self.calls_in_loops.add(node)
        if self.loops and type(func) is cst.Attribute:
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
        if type(func) is not cst.Attribute:
            return
        method = func.attr.value
        if "hook" in method and method.startswith("register"):
            for arg in node.args:
                self.hook_names |= {n for n in names_in(arg.value)}
                if type(arg.value) is cst.Attribute:
                    self.hook_names.add(arg.value.attr.value)
            return
        receiver = func.value
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if method == "append" and type(receiver) is cst.Subscript and len(positional) == 1:
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
        if type(mapping) is cst.Dict:
            for element in mapping.elements:
                if type(element) is cst.DictElement:
                    self._record_store(receiver, call, element.value, element.key, "update")
        elif type(mapping) is cst.DictComp:
            names = frozenset(name for comp in _comprehension_fors(mapping.for_in) for name in names_in(comp.target))
            self._record_store(receiver, call, mapping.value, mapping.key, "update", names)

    # --- what the traversal collects ------------------------------------------------------------
    def _enclosing_class(self) -> cst.ClassDef | None:
        for scope in reversed(self.scopes):
            if type(scope) is cst.ClassDef:
                return scope
        return None

    def _functions_in_owner(self) -> tuple[cst.FunctionDef, ...]:
        functions: list[cst.FunctionDef] = []
        for scope in reversed(self.scopes):
            if type(scope) is cst.ClassDef:
                break
            functions.append(scope)
        return tuple(reversed(functions))

    def _record_definition(self, target: cst.BaseExpression, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        self._record_attribute_values(target, value)
        attribute = self_attribute(target)
        owner = self._enclosing_class()
        if attribute is not None and owner is not None:
            self.self_attributes.setdefault(owner, {})[attribute] = None
        kind = self.empty_container_kind(value)
        if kind is None:
            return
        if type(target) is cst.Name:
            if not self.scopes:
                self.module_containers.setdefault(target.value, set()).add(kind)
            elif type(self.scopes[-1]) is cst.FunctionDef:
                key = (self.scopes[-1], target.value)
                self.function_containers.setdefault(key, set()).add(kind)
                self.function_definitions.setdefault(key, []).append(statement)
                self.definition_loops[id(statement)] = tuple(self.loops)
            elif type(self.scopes[-1]) is cst.ClassDef:
                self.class_containers.setdefault(self.scopes[-1], {}).setdefault(target.value, set()).add(kind)
                self.class_body_definitions.setdefault((self.scopes[-1], target.value), []).append(statement)
        elif attribute is not None and owner is not None:
            self.class_containers.setdefault(owner, {}).setdefault(attribute, set()).add(kind)

    def _record_attribute_values(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """Every value assigned to `self.<name>` in the module (None where unpacking hides it)."""
        attribute = self_attribute(target)
        if attribute is not None:
            self.attribute_values.setdefault(attribute, []).append(value)
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                self._record_attribute_values(element.value, None)

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
        while type(receiver) is cst.Subscript:
            receiver = receiver.value  # `self.bank[layer][sid] = f`: an entry of an entry grows the outer container
        owner = self._enclosing_class()
        attribute = owner_attribute(receiver, owner)
        if attribute is not None:
            if owner is None:
                return
            container = ContainerKey(owner, attribute)
            functions = self._functions_in_owner()
        elif type(receiver) is cst.Name:
            functions = tuple(scope for scope in self.scopes if type(scope) is cst.FunctionDef)
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
        return empty_container_kind(value, self.qualified_name)

    def receiver_handed(self, call: cst.Call, receiver: str, names: set[str],
                        owner: cst.ClassDef) -> dict[str, list[str]] | None:
        """What a function of this file or of another scanned file does to `<param>.<name>` for the
        parameter the instance (`receiver`) is handed to: the kinds of its uses (clear, evict, mutate,
        store, read...), walked as the class's own methods are."""
        function = self.names.definition_of(call)
        if function is not None:
            parameter = _parameter_for(function, call, receiver)
            if parameter is None or id(function) in self._handing:
                return None
            self._handing.add(id(function))
            try:
                walker = UseWalker(self, owner, names, receiver=parameter)
                visit_readonly(function, walker)
            finally:
                self._handing.discard(id(function))
            return {name: [use.kind for use in uses] for name, uses in walker.uses.items()}
        qualified = self.imports.qualify(call.func)
        if self.project is None or qualified is None or self.project.resolve(qualified) is None:
            return None
        frozen = tuple(sorted(names))
        return self.project.foreign(qualified, lambda d: _foreign_uses(d, call, receiver, frozen),
                                    needs=("containers",), kinds=("def",))

    def facts(self, scope: cst.FunctionDef | cst.Module) -> "LocalBindings":
        """What one function (or the module) binds itself, as `model.names` records it."""
        cached = self._facts.get(id(scope))
        if cached is None:
            cached = self._facts[id(scope)] = LocalBindings(self.names.scopes.get(scope))
        return cached

    # --- queries (the rest are ContainerRoles') -----------------------------------------------
    def uses(self, containers: Iterable[ContainerKey]) -> dict[ContainerKey, list[ContainerUse]]:
        """Every occurrence of these containers in their owners, classified (see `ContainerUse.kind`).
        Walks each owner once (of a class, only the methods that mention the containers)."""
        owners: dict[cst.ClassDef | cst.FunctionDef | None, dict[str, None]] = {}  # ordered: roots are walked in this order
        for container in containers:
            owners.setdefault(container.owner, {})[container.name] = None
        result: dict[ContainerKey, list[ContainerUse]] = {}
        for owner, names in owners.items():
            if type(owner) is not cst.ClassDef:
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


def empty_container_kind(value: cst.BaseExpression, qualified_name: Callable[[cst.BaseExpression], str | None]) -> str | None:
    """`{}`, `dict()`, `OrderedDict()`, `defaultdict(...)`, `[]`, `deque()` (unbounded) -> dict/list; `qualified_name`
    resolves a constructor through the file's imports."""
    if type(value) is cst.Dict and not value.elements:
        return "dict"
    if type(value) is cst.List and not value.elements:
        return "list"
    if type(value) is cst.DictComp and empty_container_kind(value.value, qualified_name) is not None:
        return "dict"  # `{layer: {} for layer in layers}`: one empty container per key, filled later
    if type(value) is cst.Call:
        name = qualified_name(value.func) or dotted_name(value.func) or ""
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
            and type(arg.value) in (cst.Dict, cst.List, cst.Tuple)
            and not arg.value.elements
            for arg in value.args
        ):
            return kind
        return None
    return None


def _parameter_for(function: cst.FunctionDef, call: cst.Call, receiver: str) -> str | None:
    """The parameter of `function` that an argument `receiver` of `call` lands in."""
    params = [*function.params.posonly_params, *function.params.params]
    for position, arg in enumerate(call.args):
        if not (type(arg.value) is cst.Name and arg.value.value == receiver) or arg.star:
            continue
        if arg.keyword is not None:
            return arg.keyword.value
        return params[position].name.value if position < len(params) else None
    return None


def _foreign_uses(definition, call: cst.Call, receiver: str, names: tuple[str, ...]) -> dict[str, list[str]] | None:
    """Node-free: the kinds of the uses a function of another file makes of `<param>.<name>`."""
    containers = definition.model.containers
    function = definition.node
    if containers is None or type(function) is not cst.FunctionDef:
        return None
    parameter = _parameter_for(function, call, receiver)
    if parameter is None:
        return None
    walker = UseWalker(containers, function, set(names), receiver=parameter)
    walker.module_level = False  # `<param>.<name>` attributes, as in a class
    visit_readonly(function, walker)
    return {name: [use.kind for use in uses] for name, uses in walker.uses.items()}


def stored_values(payload: cst.BaseExpression, container: cst.BaseExpression) -> list[cst.BaseExpression | None]:
    """The values a store puts into a container (None where they cannot be told)."""
    if not (
        type(payload) is cst.Call and type(payload.func) is cst.Attribute and payload.func.value is container
    ):
        return [payload]  # `c[k] = value`
    method = payload.func.attr.value
    positional = [arg.value for arg in payload.args if arg.keyword is None and not arg.star]
    if method == "append" and len(positional) == 1:
        return positional
    if method in ("insert", "setdefault") and len(positional) == 2:
        return positional[1:]
    if method == "update" and len(positional) == 1 and type(positional[0]) is cst.Dict:
        return [e.value if type(e) is cst.DictElement else None for e in positional[0].elements]
    if method == "update" and len(positional) == 1 and type(positional[0]) is cst.DictComp:
        return [positional[0].value]
    return [None]


def _comprehension_fors(comp: cst.CompFor | None):
    while comp is not None:
        yield comp
        comp = comp.inner_for_in
