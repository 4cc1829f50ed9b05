"""Names: every name use to its bindings, in Python's scopes, and qualified names through imports.

One binding model for all rules. It is filled in the engine's single traversal (a batchable visitor)
and answers afterwards:

- which bindings a name has in the scope a use resolves to (module, class, function, lambda,
  comprehension; `global`/`nonlocal` redirect; class bodies are invisible to nested functions),
  with the value bound and, for tuple unpacking, the element that lands in the name;
- which of them come before a use in source order (`order` numbers every binding and use), and
  whether they sit in a branch (`conditional`) or in which blocks (`suites`);
- attributes stored on `self` in any method of a class (`self.cache = {}` in `__init__`, read in
  `step`), which of them may hold at a read (what `__init__` leaves, or the earlier binding a
  method rebinds from), and module globals;
- the qualified name an expression refers to through imports and plain aliases
  (`import torch.nn.functional as F; mse = F.mse_loss` -> `torch.nn.functional.mse_loss`),
  honouring local shadowing (a parameter named `F` is not the import).

Why not libcst's ScopeProvider/QualifiedNameProvider: `bench/name_resolution.py` measures them on
the bench corpus (see bench/README.md); this model is a fraction of their cost and also keeps the
bound values and source order the rules ask about.
"""

from __future__ import annotations

import bisect
import re

from dataclasses import dataclass, field
from typing import Iterator, Optional, Union

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model.source.imports import dotted_name, imported_names

ScopeNode = Union[cst.Module, cst.ClassDef, cst.FunctionDef, cst.Lambda, cst.BaseComp]


@dataclass(eq=False)
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


@dataclass(eq=False)
class Scope:
    node: ScopeNode
    parent: Optional["Scope"]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, cst.ClassDef)

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, (cst.FunctionDef, cst.Lambda))

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def resolving(self, name: str) -> "Scope":
        """The scope whose binding of `name` a use in this scope sees (LEGB; class bodies skipped)."""
        if name in self.declared_global:
            return self.module()
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            if name in scope.bindings and (first or not scope.is_class):
                if not (name in scope.declared_nonlocal):
                    return scope
            first = False
            scope = scope.parent
        return self.module()


@dataclass
class Use:
    scope: Scope
    order: int
    suites: tuple[int, ...]
    grad_off: bool = False


@dataclass(frozen=True)
class Callee:
    """What a callable expression runs (see `Names.callable_of`)."""

    kind: str  # function (a def, or a module's forward), lambda, class (no forward found), library
    node: Optional[Union[cst.FunctionDef, cst.Lambda, cst.ClassDef]] = None
    qualified: Optional[str] = None  # for library callables: `torch.nn.LSTM`
    module_class: Optional[cst.ClassDef] = None  # when `node` is the forward of a module class of this file


class Names(cst.BatchableCSTVisitor):
    """The binding model of one file. Run it in the batched traversal, then query it."""

    def __init__(self) -> None:
        super().__init__()
        self.module_scope: Optional[Scope] = None
        self.scopes: dict[cst.CSTNode, Scope] = {}
        self.uses: dict[cst.Name, Use] = {}
        self.self_attributes: dict[cst.ClassDef, dict[str, list[Binding]]] = {}
        self.returns: dict[cst.FunctionDef, list[cst.BaseExpression]] = {}  # what each function returns
        self._stack: list[Scope] = []
        self._suites: list[list[int]] = []  # per scope: ids of the open blocks
        self._branch_depth: list[int] = []  # per scope: open if/else/except/match/loop bodies
        self._grad_off: list[bool] = []  # per scope: autograd is off here
        self.grad_off_functions: set[cst.FunctionDef] = set()
        # functions that build a decorator turning autograd off (`def smart_inference_mode(): ...
        # return torch.inference_mode()(fn)`): `@smart_inference_mode()` turns it off too
        self._grad_off_makers: set[cst.CSTNode] = set()
        self._methods: list[tuple[cst.ClassDef, str]] = []  # (class, self parameter) per open method
        self._order = 0
        self._index_stamp = -1
        # id(use) -> ((its scope, how many bindings of its name it had), the ones reaching it): `reaching` is asked
        # again for the same use by every query that follows a value back (in a script whose cells
        # rebind the same names, once per earlier cell), and each answer scans all of the name's bindings
        self._reaching: dict[int, tuple[tuple[int, int], list[Binding]]] = {}
        self._index: tuple[dict[int, list[Binding]], dict[int, list[Binding]], dict[str, list[int]]] = ({}, {}, {})

    # -- queries ---------------------------------------------------------------------------------------
    def scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        """The scope a scope-opening node opens, or the scope a recorded Name use sits in."""
        scope = self.scopes.get(node)
        if scope is not None:
            return scope
        use = self.uses.get(node)  # type: ignore[arg-type]
        return use.scope if use is not None else None

    def bindings_of(self, name: cst.Name) -> list[Binding]:
        """All bindings of the name a use resolves to, in source order (loops make later ones reach too)."""
        use = self.uses.get(name)
        if use is None:
            return []
        return use.scope.resolving(name.value).bindings.get(name.value, [])

    def reaching(self, name: cst.Name) -> list[Binding]:
        """The bindings that may hold at a use: the last unconditional one before it and any
        conditional ones after that; in a loop, bindings later in the same loop reach the use too."""
        use = self.uses.get(name)
        if use is None:
            return []
        scope = use.scope.resolving(name.value)
        bindings = scope.bindings.get(name.value, [])
        if scope is not use.scope:
            return bindings  # a closure or global: any of them, whenever it is called
        stamp = (id(scope), len(bindings))  # bindings are only added, in source order
        known = self._reaching.get(id(name))
        if known is None or known[0] != stamp:
            known = (stamp, _reaching_use(bindings, use))
            self._reaching[id(name)] = known
        return list(known[1])

    def single_value(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The value a use holds when exactly one binding with a visible value reaches it."""
        reaching = self.reaching(name)
        if len(reaching) != 1:
            return None
        return reaching[0].bound_value

    def attribute_bindings(self, class_node: cst.ClassDef, attribute: str) -> list[Binding]:
        """`self.<attribute> = ...` in any method of the class, in source order."""
        return self.self_attributes.get(class_node, {}).get(attribute, [])

    def attribute_reaching(self, class_node: cst.ClassDef, attribute: str, receiver: Optional[cst.Name] = None) -> list[Binding]:
        """The `self.<attribute>` bindings that may hold where `receiver` (the `self` of a read) is read.
        In a method that binds it before the read, the ones `reaching` gives a name there
        (`self.net = nn.Sequential(self.net, nn.Sigmoid())` reads the earlier `self.net`); anywhere
        else, what construction leaves (the last unconditional binding of `__init__` and the conditional
        ones after it) and every binding of the other methods, which may have run before."""
        bindings = self.attribute_bindings(class_node, attribute)
        use = self.uses.get(receiver) if receiver is not None else None
        earlier = [b for b in bindings if use is not None and b.scope is use.scope and b.order < use.order]
        if use is not None and earlier:
            # only earlier ones: a later rebinding reaches a read only around a loop (rare in `__init__`),
            # and `_shares_loop` would also let a conditional wrap reach its own read
            return _reaching_use(earlier, use)
        init = [b for b in bindings if isinstance(b.scope.node, cst.FunctionDef) and b.scope.node.name.value == "__init__"]
        last = max((i for i, b in enumerate(init) if not b.conditional), default=0)
        return sorted(init[last:] + [b for b in bindings if b not in init], key=lambda b: b.order)

    def enclosing_class(self, scope: Scope) -> Optional[cst.ClassDef]:
        current: Optional[Scope] = scope
        while current is not None:
            if current.is_class:
                return current.node  # type: ignore[return-value]
            current = current.parent
        return None

    def qualify(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """What an expression names through imports and single plain aliases, or None."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Attribute):
            base = self.qualify(expr.value, depth + 1)
            return f"{base}.{expr.attr.value}" if base is not None else None
        if not isinstance(expr, cst.Name):
            return None
        bindings = self.bindings_of(expr) if expr in self.uses else self._module_bindings(expr.value)
        if not bindings:
            return None
        imported = {b.qualified for b in bindings if b.kind == "import"}
        if len(imported) == 1 and len(bindings) == len([b for b in bindings if b.kind == "import"]):
            return imported.pop()
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            value = bindings[0].value
            if isinstance(value, (cst.Name, cst.Attribute)):
                return self.qualify(value, depth + 1)
        return None

    @property
    def position(self) -> int:
        """The order number of the latest binding or use seen so far: another part that records a fact
        during the traversal keeps this to place the fact among the bindings (`Binding.order`)."""
        return self._order

    def all_bindings(self) -> Iterator[Binding]:
        for scope in self.scopes.values():
            for bindings in scope.bindings.values():
                yield from bindings

    def bindings_within(self, node: cst.CSTNode) -> list[Binding]:
        """The bindings of the scope `node` makes and of every scope nested in it (closures,
        comprehensions, classes), in `all_bindings` order."""
        return self._binding_index()[0].get(id(node), [])

    def bindings_in_block(self, block: cst.CSTNode) -> list[Binding]:
        """The bindings made inside a block (`IndentedBlock`, a loop's body) of their own scope (not of
        functions or comprehensions nested in it), in `all_bindings` order."""
        return self._binding_index()[1].get(id(block), [])

    def bound_between(self, names: set[str], after: int, until: int) -> bool:
        """Whether one of `names` is bound at an order in (after, until]."""
        by_name = self._binding_index()[2]
        for name in names:
            orders = by_name.get(name, [])
            first = bisect.bisect_right(orders, after)
            if first < len(orders) and orders[first] <= until:
                return True
        return False

    def _binding_index(self) -> tuple[dict[int, list[Binding]], dict[int, list[Binding]], dict[str, list[int]]]:
        # Rules ask these for every function, loop or candidate: one pass over all bindings, not one a
        # question. Rebuilt if bindings were added since (a question asked during the traversal).
        if self._index_stamp != self._order:
            within: dict[int, list[Binding]] = {}
            by_block: dict[int, list[Binding]] = {}
            orders: dict[str, list[int]] = {}
            for binding in self.all_bindings():
                orders.setdefault(binding.name, []).append(binding.order)
                scope: Optional[Scope] = binding.scope
                while scope is not None:
                    within.setdefault(id(scope.node), []).append(binding)
                    scope = scope.parent
                for block in binding.suites:
                    by_block.setdefault(block, []).append(binding)
            self._index = (within, by_block, {name: sorted(found) for name, found in orders.items()})
            self._index_stamp = self._order
        return self._index

    def _module_bindings(self, name: str) -> list[Binding]:
        return self.module_scope.bindings.get(name, []) if self.module_scope is not None else []

    # -- scopes ----------------------------------------------------------------------------------------
    def _open(self, node: ScopeNode, grad_off: bool = False) -> None:
        scope = Scope(node, self._stack[-1] if self._stack else None)
        self.scopes[node] = scope
        self._stack.append(scope)
        self._suites.append([])
        self._branch_depth.append(0)
        # comprehensions and lambdas run where they are written; a def runs where it is called
        inherited = bool(self._grad_off) and self._grad_off[-1] and not isinstance(node, cst.FunctionDef)
        self._grad_off.append(grad_off or inherited)

    def _close(self) -> None:
        self._stack.pop()
        self._suites.pop()
        self._branch_depth.pop()
        self._grad_off.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._open(node)
        self.module_scope = self._stack[0]

    def leave_Module(self, original_node: cst.Module) -> None:
        self._close()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, "class", node)
        self._open(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._close()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value, "def", node)
        owner = self._stack[-1].node if self._stack else None
        grad_off = any(self._disables_grad(d.decorator) or self._grad_off_decorator(d.decorator) for d in node.decorators)
        if grad_off:
            self.grad_off_functions.add(node)
        self._open(node, grad_off)
        if isinstance(owner, cst.ClassDef):
            first = _first_parameter(node)
            is_static = any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in node.decorators)
            self._methods.append((owner, first if first and not is_static else ""))
        else:
            self._methods.append(self._methods[-1] if self._methods else (None, ""))  # type: ignore[arg-type]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._methods.pop()
        self._close()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._open(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._close()

    def _visit_comp(self, node: cst.BaseComp) -> None:
        self._open(node)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._visit_comp(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._close()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._visit_comp(node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._close()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._visit_comp(node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._close()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._visit_comp(node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._close()

    # -- autograd regions ------------------------------------------------------------------------------
    def visit_With_body(self, node: cst.With) -> None:
        if self._grad_off:
            self._grad_off.append(self._grad_off[-1] or any(self._disables_grad(item.item) for item in node.items))

    def leave_With_body(self, node: cst.With) -> None:
        if len(self._grad_off) > len(self._stack):
            self._grad_off.pop()

    def _disables_grad(self, expr: cst.BaseExpression) -> bool:
        """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`, as imported so far."""
        target = expr.func if isinstance(expr, cst.Call) else expr
        name = self._qualify_so_far(target) or ""
        if name in GRAD_OFF_CONTEXTS:
            # `inference_mode(False)` turns it back off
            return not (isinstance(expr, cst.Call) and expr.args and _is_name(expr.args[0].value, "False"))
        if name in GRAD_SWITCHES and isinstance(expr, cst.Call) and expr.args:
            return _is_name(expr.args[0].value, "False")
        return False

    def _grad_off_context(self, expr: cst.BaseExpression) -> bool:
        """`torch.no_grad()`, or a choice between such contexts (`(torch.inference_mode if new else
        torch.no_grad)()`)."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.IfExp) and not expr.args:
            branches = (expr.func.body, expr.func.orelse)
            return all((self._qualify_so_far(b) or "") in GRAD_OFF_CONTEXTS for b in branches)
        return isinstance(expr, cst.Call) and self._disables_grad(expr)

    def _grad_off_decorator(self, decorator: cst.BaseExpression) -> bool:
        """A decorator made by a function that turns autograd off: one of this file whose body applies
        or returns a no-grad context, or, when the file cannot show its body (imported from the
        project), one whose name says what it does (`smart_inference_mode()`, `torch_no_grad`)."""
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        if not isinstance(target, (cst.Name, cst.Attribute)) or not self._stack:
            return False
        if isinstance(target, cst.Name):
            bindings = self._stack[-1].resolving(target.value).bindings.get(target.value, [])
            if bindings and bindings[-1].kind == "def":
                return bindings[-1].node in self._grad_off_makers
        qualified = self._qualify_so_far(target)
        if qualified is None or qualified.startswith("torch."):
            return False  # a local variable, or a torch name (its real contexts are matched exactly)
        return bool(_GRAD_OFF_NAME.search(qualified.rsplit(".", 1)[-1].lower()))

    def _mark_grad_off_maker(self) -> None:
        for scope in self._stack:
            if isinstance(scope.node, cst.FunctionDef):
                self._grad_off_makers.add(scope.node)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Call) and self._grad_off_context(node.func):
            self._mark_grad_off_maker()  # `torch.inference_mode()(fn)`: a context applied as a decorator

    def _qualify_so_far(self, expr: cst.BaseExpression) -> Optional[str]:
        """Qualified name by the imports met so far (the traversal has not reached later uses yet)."""
        if isinstance(expr, cst.Attribute):
            base = self._qualify_so_far(expr.value)
            return f"{base}.{expr.attr.value}" if base is not None else None
        if not isinstance(expr, cst.Name) or not self._stack:
            return None
        bindings = self._stack[-1].resolving(expr.value).bindings.get(expr.value, [])
        return bindings[-1].qualified if bindings and bindings[-1].kind == "import" else None

    # -- blocks: which suites and branches a binding sits in ------------------------------------------
    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self._suites:
            self._suites[-1].append(id(node))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        if self._suites and self._suites[-1]:
            self._suites[-1].pop()

    # libcst finds visitor methods by their __name__, so each branch kind gets its own pair
    def _enter_branch(self) -> None:
        if self._branch_depth:
            self._branch_depth[-1] += 1

    def _leave_branch(self) -> None:
        if self._branch_depth:
            self._branch_depth[-1] -= 1

    def visit_If_body(self, node: cst.If) -> None:
        self._enter_branch()

    def leave_If_body(self, node: cst.If) -> None:
        self._leave_branch()

    def visit_Else_body(self, node: cst.Else) -> None:
        self._enter_branch()

    def leave_Else_body(self, node: cst.Else) -> None:
        self._leave_branch()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._enter_branch()

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._leave_branch()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._enter_branch()

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._leave_branch()

    def visit_For_body(self, node: cst.For) -> None:
        self._enter_branch()

    def leave_For_body(self, node: cst.For) -> None:
        self._leave_branch()

    def visit_While_body(self, node: cst.While) -> None:
        self._enter_branch()

    def leave_While_body(self, node: cst.While) -> None:
        self._leave_branch()

    # -- bindings --------------------------------------------------------------------------------------
    def _bind(
        self,
        name: str,
        kind: str,
        node: cst.CSTNode,
        value: Optional[cst.BaseExpression] = None,
        element: Optional[cst.BaseExpression] = None,
        position: tuple[int, ...] = (),
        qualified: Optional[str] = None,
        scope: Optional[Scope] = None,
    ) -> None:
        if not self._stack:
            return
        here = scope or self._stack[-1]
        if name in here.declared_global:
            here = here.module()
        self._order += 1
        binding = Binding(
            name, kind, node, here, self._order, value, element, position, qualified,
            tuple(self._suites[-1]), self._branch_depth[-1] > 0, self._grad_off[-1],
        )
        if name in here.declared_nonlocal and here.parent is not None:
            here = here.parent.resolving(name)
            binding.scope = here
        here.bindings.setdefault(name, []).append(binding)

    def _bind_target(
        self,
        target: cst.BaseExpression,
        kind: str,
        node: cst.CSTNode,
        value: Optional[cst.BaseExpression],
        element: Optional[cst.BaseExpression] = None,
        position: tuple[int, ...] = (),
    ) -> None:
        if isinstance(target, cst.Name):
            unpacked = bool(position)
            self._bind(target.value, "unpack" if unpacked and kind == "assign" else kind, node, value,
                       element if unpacked else None, position)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = _literal_elements(element if position else value)
            for index, item in enumerate(target.elements):
                inner = item.value
                source = elements[index] if elements is not None and index < len(elements) else None
                if isinstance(inner, cst.StarredElement) or isinstance(item, cst.StarredElement):
                    source = None
                    inner = inner.value if isinstance(inner, cst.StarredElement) else inner
                self._bind_target(inner, kind, node, value, source, position + (index,))
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, kind, node, value, None, position + (-1,))
        elif isinstance(target, cst.Attribute):
            self._bind_attribute(target, kind, node, value, element, position)

    def _bind_attribute(self, target, kind, node, value, element, position) -> None:
        if not self._methods:
            return
        owner, self_name = self._methods[-1]
        if owner is None or not self_name or not (isinstance(target.value, cst.Name) and target.value.value == self_name):
            return
        self._order += 1
        attribute = target.attr.value
        binding = Binding(
            attribute, "unpack" if position else kind, node, self._stack[-1], self._order, value,
            element if position else None, position, None, tuple(self._suites[-1]), self._branch_depth[-1] > 0,
            self._grad_off[-1],
        )
        self.self_attributes.setdefault(owner, {}).setdefault(attribute, []).append(binding)

    # A binding takes effect after its value is evaluated: in `h = cell(h)` the `h` read is the old one.
    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, "assign", node, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, "assign", node, node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, "augment", node, node.value)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        # a walrus in a comprehension binds in the enclosing function
        scope = self._stack[-1] if self._stack else None
        while scope is not None and isinstance(scope.node, cst.BaseComp):
            scope = scope.parent
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, "walrus", node, node.value, scope=scope)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, "for", node, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, "for", node, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, "with", node, node.item)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(node.name.name.value, "except", node)

    def visit_Import(self, node: cst.Import) -> None:
        for local, qualified, alias in imported_names(node):
            self._bind(local, "import", alias, qualified=qualified)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        for local, qualified, alias in imported_names(node):
            self._bind(local, "import", alias, qualified=qualified)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name.value, "param", node, node.default)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, "del", node, None)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, "match", node)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value, "match", node)

    def visit_Global(self, node: cst.Global) -> None:
        if self._stack:
            self._stack[-1].declared_global.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self._stack:
            self._stack[-1].declared_nonlocal.update(item.name.value for item in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        scope = self._stack[-1] if self._stack else None
        if scope is not None and isinstance(scope.node, cst.FunctionDef) and node.value is not None:
            self.returns.setdefault(scope.node, []).append(node.value)
            if self._grad_off_context(node.value):
                self._mark_grad_off_maker()  # `return torch.no_grad()`: the factory's result decorates

    # -- same-file functions -----------------------------------------------------------------------------
    def definition_of(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file a call runs: `helper(x)` bound by a `def` the call sees, or
        `self.method(x)` defined in the enclosing class."""
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self.bindings_of(func)
            defs = [b.node for b in bindings if b.kind == "def"]
            return defs[-1] if defs and len(defs) == len(bindings) else None  # type: ignore[return-value]
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            use = self.uses.get(func.value)
            if use is None:
                return None
            scope = use.scope
            while scope is not None and not isinstance(scope.node, cst.FunctionDef):
                scope = scope.parent
            owner = scope.parent if scope is not None else None
            if owner is None or not owner.is_class or _first_parameter(scope.node) != func.value.value:  # type: ignore[arg-type]
                return None
            bindings = owner.bindings.get(func.attr.value, [])
            defs = [b.node for b in bindings if b.kind == "def"]
            return defs[-1] if defs and len(defs) == len(bindings) else None  # type: ignore[return-value]
        return None

    def callable_of(self, expr: cst.BaseExpression, depth: int = 0) -> Optional["Callee"]:
        """What calling `expr` runs: a function or method of this file (also through a lambda or
        `functools.partial`), the `forward` of a module built from a class of this file, or a library
        callable or module class by its qualified name (`torch.nn.LSTM`). Follows single assignments,
        `self.<attr>` bound in the class, and elements of module containers (`self.layers[i]`,
        `for name, cell in self.cells.items()` over `nn.ModuleList([...])`/`nn.ModuleDict({...})`)."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Lambda):
            return Callee("lambda", expr)
        if isinstance(expr, cst.Call):
            target = self.qualify(expr.func) or ""
            if target in ("functools.partial", "functools.partialmethod") and expr.args:
                return self.callable_of(expr.args[0].value, depth + 1)
            return self.instance_of(expr, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.element_of(expr.value, depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("__call__", "forward"):
            target = self.callable_of(expr.value, depth + 1)  # `layer.__call__`, `self.block.forward`
            if target is not None and target.kind != "library":
                return target
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner = self._self_class(expr.value)
            if owner is not None:
                members = self.scopes[owner].bindings.get(expr.attr.value, []) if owner in self.scopes else []
                defs = [b.node for b in members if b.kind == "def"]
                if defs and len(defs) == len(members):
                    return Callee("function", defs[-1])
                values = [b.bound_value for b in self.attribute_bindings(owner, expr.attr.value)]
                found = {id(c.node) if c.node is not None else c.qualified: c
                         for v in values if v is not None and (c := self.callable_of(v, depth + 1)) is not None}
                return next(iter(found.values())) if len(found) == 1 else None
        qualified = self.qualify(expr)
        if qualified is not None:
            return Callee("library", None, qualified)
        if isinstance(expr, cst.Name):
            bindings = self.bindings_of(expr) if expr in self.uses else self._module_bindings(expr.value)
            defs = [b.node for b in bindings if b.kind == "def"]
            if defs and len(defs) == len(bindings):
                return Callee("function", defs[-1])
            if len(bindings) == 1:
                binding = bindings[0]
                if binding.kind == "for" and binding.value is not None:
                    return self.element_of(_iterated(binding.value), depth + 1)
                if binding.bound_value is not None:
                    return self.callable_of(binding.bound_value, depth + 1)
        return None

    def instance_of(self, call: cst.Call, depth: int = 0) -> Optional["Callee"]:
        """The module (or object) a constructor call builds: a class of this file (calling it runs its
        `forward`, or `__call__`) or a library class by qualified name."""
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self.bindings_of(func) if func in self.uses else self._module_bindings(func.value)
            classes = [b.node for b in bindings if b.kind == "class"]
            if classes and len(classes) == len(bindings):
                owner = classes[-1]
                members = self.scopes[owner].bindings if owner in self.scopes else {}
                for method in ("forward", "__call__"):
                    defs = [b.node for b in members.get(method, []) if b.kind == "def"]
                    if defs:
                        return Callee("function", defs[-1], None, owner)
                return Callee("class", owner)  # type: ignore[arg-type]
        qualified = self.qualify(func)
        return Callee("library", None, qualified) if qualified is not None else None

    def element_of(self, container: cst.BaseExpression, depth: int) -> Optional["Callee"]:
        """What an element of a module container runs: `nn.ModuleList([Block() for _ in r])`,
        `nn.ModuleDict({k: Cell() ...})`, `[A(), A()]`, also through `.items()`/`.values()`."""
        if isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute):
            if container.func.attr.value in ("items", "values", "children", "modules"):
                return self.element_of(container.func.value, depth + 1)
        values: list[Optional[cst.BaseExpression]] = [container]
        if isinstance(container, cst.Attribute) and isinstance(container.value, cst.Name):
            owner = self._self_class(container.value)
            values = [b.bound_value for b in self.attribute_bindings(owner, container.attr.value)] if owner else []
        elif isinstance(container, cst.Name):
            bindings = self.bindings_of(container) if container in self.uses else []
            values = [b.bound_value for b in bindings]
        for value in values:
            element = _first_element(value)
            callee = self.callable_of(element, depth + 1) if isinstance(element, cst.Call) else None
            if callee is not None:
                return callee
        return None

    def _self_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        """The class whose method's first parameter `name` is (`self` in a method), or None."""
        use = self.uses.get(name)
        if use is None:
            return None
        scope: Optional[Scope] = use.scope
        while scope is not None and not isinstance(scope.node, cst.FunctionDef):
            scope = scope.parent
        owner = scope.parent if scope is not None else None
        if owner is None or not owner.is_class or _first_parameter(scope.node) != name.value:  # type: ignore[union-attr,arg-type]
            return None
        return owner.node  # type: ignore[return-value]

    # -- uses ------------------------------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if self._stack:
            self._order += 1
            self.uses[node] = Use(self._stack[-1], self._order, tuple(self._suites[-1]), self._grad_off[-1])

    def leave_Attribute_attr(self, node: cst.Attribute) -> None:
        self.uses.pop(node.attr, None)  # `x.attr`: only `x` is a variable

    def leave_Arg_keyword(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.uses.pop(node.keyword, None)


GRAD_OFF_CONTEXTS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
     "torch.autograd.grad_mode.inference_mode"}
)
GRAD_SWITCHES = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
_GRAD_OFF_NAME = re.compile(r"(?:^|_)(?:no_grad|inference_mode)(?:$|_)")


def _is_name(expr: cst.BaseExpression, value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


def _first_parameter(node: cst.FunctionDef) -> str:
    params = list(node.params.posonly_params) + list(node.params.params)
    return params[0].name.value if params else ""


def _literal_elements(value: Optional[cst.BaseExpression]) -> Optional[list[cst.BaseExpression]]:
    if isinstance(value, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        return [e.value for e in value.elements]
    return None


def _first_element(value: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """The first element a container expression builds: `nn.ModuleList([Block() for _ in r])` -> `Block()`."""
    if isinstance(value, cst.Call) and value.args:
        value = value.args[0].value  # nn.ModuleList([...]) / nn.ModuleDict({...}) / nn.Sequential(a, b)
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return value.elt
    if isinstance(value, cst.DictComp):
        return value.value
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        return value.elements[0].value
    if isinstance(value, cst.Dict) and value.elements and isinstance(value.elements[0], cst.DictElement):
        return value.elements[0].value
    return value if isinstance(value, cst.Call) else None


def _iterated(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """`self.cells.items()` -> `self.cells`; `enumerate(xs)`/`zip(xs, ...)` -> `xs`."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("enumerate", "zip"):
        return iterable.args[0].value if iterable.args else iterable
    return iterable


def _reaching_use(bindings: list[Binding], use: Use) -> list[Binding]:
    """Of one scope's bindings of a name, those that may hold at `use`: the last unconditional one before
    it, any conditional ones after that, and later ones in a loop around both."""
    result: list[Binding] = []
    for binding in reversed([b for b in bindings if b.order < use.order]):
        result.append(binding)
        if not binding.conditional and use.suites[: len(binding.suites)] == binding.suites:
            break
    result.reverse()
    return result + [b for b in bindings if b.order > use.order and b.conditional and _shares_loop(b, use)]


def _shares_loop(binding: Binding, use: Use) -> bool:
    """A later binding reaches an earlier use only around a loop that holds both."""
    return binding.conditional and bool(set(binding.suites) & set(use.suites))


def build_names(module: cst.Module) -> Names:
    """The binding model of a module, computed on its own (outside the engine's batched traversal)."""
    names = Names()
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([names])
    return names
