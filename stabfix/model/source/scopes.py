"""Where names live: a binding (one place a name or `self.<attr>` gets a value), a scope of Python's
(module, class, function, lambda, comprehension) with its bindings, a recorded use of a name, and which
bindings reach a use in source order. The `names` part records them (`binding_recorder`) and answers
questions over them (`names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

from stabfix.model.source.imports import dotted_name

ScopeNode = Union[cst.Module, cst.ClassDef, cst.FunctionDef, cst.Lambda, cst.BaseComp]


@dataclass(eq=False, slots=True)
class Binding:
    """One place where a name (or `self.<attr>`) gets a value."""

    name: str
    kind: str  # assign, augment, unpack, walrus, param, for, with, except, import, def, class, del, match
    node: cst.CSTNode  # the binding statement, parameter, loop, with-item, import alias...
    scope: "Scope"
    order: int
    value: Optional[cst.BaseExpression] = None  # the whole right-hand side (or iterable, context manager)
    element: Optional[cst.BaseExpression] = None  # what lands in this name when a literal tuple is unpacked
    position: tuple[int, ...] = ()  # index path into the unpacked value: `a, (b, c) = v` gives b (1, 0)
    qualified: Optional[str] = None  # for imports: what the name stands for
    suites: tuple[int, ...] = ()  # ids of the enclosing blocks of its scope, outermost first
    conditional: bool = False  # inside an if/else/except/match branch or a loop of its scope
    grad_off: bool = False  # under `torch.no_grad()`/`inference_mode()` (a block or the function's decorator)

    @property
    def bound_value(self) -> Optional[cst.BaseExpression]:
        """The expression this name holds right after the binding, when the code shows it."""
        if self.kind == "unpack":
            return self.element
        if self.kind in ("assign", "walrus"):
            return self.value
        return None


_FUNCTION_TYPES = frozenset({cst.FunctionDef, cst.Lambda})


@dataclass(eq=False)
class Scope:
    node: ScopeNode
    parent: Optional["Scope"]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    # exact types (libcst has no subclass of them): asked ~250k times a corpus scan, where a failing
    # `isinstance` on a libcst class goes through `ABCMeta.__instancecheck__`
    @property
    def is_class(self) -> bool:
        return type(self.node) is cst.ClassDef

    @property
    def is_function(self) -> bool:
        return type(self.node) in _FUNCTION_TYPES

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def resolving(self, name: str) -> "Scope":
        """The scope whose binding of `name` a use in this scope sees (LEGB; class bodies skipped)."""
        if name in self.declared_global:
            return self.module()
        if name in self.bindings and name not in self.declared_nonlocal:
            return self  # its own (a class body sees its own names too)
        scope = self.parent
        while scope is not None:
            if name in scope.bindings and type(scope.node) is not cst.ClassDef and name not in scope.declared_nonlocal:
                return scope
            scope = scope.parent
        return self.module()


@dataclass(slots=True)
class Use:
    scope: Scope
    order: int
    suites: tuple[int, ...]
    grad_off: bool = False


def first_parameter(node: cst.FunctionDef) -> str:
    """The name of a function's first positional parameter (`self` in a method), or ''."""
    params = list(node.params.posonly_params) + list(node.params.params)
    return params[0].name.value if params else ""


def instance_receiver(method: cst.FunctionDef) -> str:
    """The name a method of a class calls its instance, whatever it is (`self`, `this`): its first positional
    parameter; '' for a `staticmethod` (no instance) or a `classmethod` (the class)."""
    if any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in method.decorators):
        return ""
    return first_parameter(method)


def method_receiver(cls: Optional[cst.ClassDef], functions: tuple[cst.FunctionDef, ...]) -> str:
    """Where `functions` (outermost first) are open inside class `cls`: the instance receiver of the one that
    is a method of `cls` (a function nested in the method reads it too); '' outside a method."""
    if cls is None or not functions or type(cls.body) is not cst.IndentedBlock:
        return ""
    members = set(map(id, cls.body.body))  # the class's own statements, by identity
    method = next((f for f in reversed(functions) if id(f) in members), None)
    return instance_receiver(method) if method is not None else ""


def reaching_use(bindings: list[Binding], use: Use) -> list[Binding]:
    """Of one scope's bindings of a name, those that may hold at `use`: the last one before it that runs
    whenever the use does (in a block that holds the use too: unconditional, or earlier in the use's own
    branch), any conditional ones after that, and later ones in a loop around both."""
    if len(bindings) == 1:  # most names are bound once in their scope: the same answer, without the scans
        only = bindings[0]
        if only.order < use.order or (only.order > use.order and only.conditional and _shares_loop(only, use)):
            return [only]
        return []
    result: list[Binding] = []
    for binding in reversed([b for b in bindings if b.order < use.order]):
        result.append(binding)
        # a conditional binding sits in its branch's body (a one-line body too), so a block of its that
        # holds the use lies inside that branch
        if use.suites[: len(binding.suites)] == binding.suites:
            break
    result.reverse()
    return result + [b for b in bindings if b.order > use.order and b.conditional and _shares_loop(b, use)]


def _shares_loop(binding: Binding, use: Use) -> bool:
    """A later binding reaches an earlier use only around a loop that holds both."""
    return binding.conditional and bool(set(binding.suites) & set(use.suites))

