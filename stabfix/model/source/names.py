"""Names: every name use to its bindings, in Python's scopes, and qualified names through imports.

One binding model for all rules. It is filled in the engine's single traversal (a batchable visitor)
and answers afterwards:

- which bindings a name has in the scope a use resolves to (module, class, function, lambda,
  comprehension; `global`/`nonlocal` redirect; class bodies are invisible to nested functions),
  with the value bound and, for tuple unpacking, the element that lands in the name;
- which of them come before a use in source order (`order` numbers every binding and use), and
  whether they sit in a branch (`conditional`) or in which blocks (`suites`);
- attributes stored on `self` in any method of a class (`self.cache = {}` in `__init__`, read in
  `step`; also by a module-level function a method hands its instance to), which of them may hold at
  a read (what `__init__` leaves, or the earlier binding a method rebinds from), and module globals;
- the qualified name an expression refers to through imports and plain aliases
  (`import torch.nn.functional as F; mse = F.mse_loss` -> `torch.nn.functional.mse_loss`),
  honouring local shadowing (a parameter named `F` is not the import).

Why not libcst's ScopeProvider/QualifiedNameProvider: `bench/name_resolution.py` measures them on
the bench corpus (see bench/README.md); this model is a fraction of their cost and also keeps the
bound values and source order the rules ask about.

The part is three modules and this one: `scopes` (bindings, scopes, uses, which bindings reach a use),
`binding_recorder` with `regions` (the traversal that records them, and the blocks, branches and
no-grad regions around each), `callables` (what a call runs). `Names` joins them and answers the
binding questions; import everything from here.
"""

from __future__ import annotations

import bisect

from typing import Iterator, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model.source.binding_recorder import BindingRecorder
from stabfix.model.source.callables import Callee, CallableResolution
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.regions import GRAD_OFF_CONTEXTS, GRAD_SWITCHES
from stabfix.model.source.scopes import Binding, Scope, ScopeNode, Use, instance_receiver, reaching_use

# the names other modules import from here
__all__ = ["Binding", "Callee", "GRAD_OFF_CONTEXTS", "GRAD_SWITCHES", "Names", "Scope", "ScopeNode", "Use",
           "build_names", "dotted_name"]


class Names(CallableResolution, BindingRecorder):
    """The binding model of one file. Run it in the batched traversal, then query it."""

    def __init__(self) -> None:
        super().__init__()
        self._index_stamp = -1
        # id(use) -> (binding order and number of uses it was answered at, the use, (its scope, how many
        # bindings of its name it had) or None for a closure's, the ones reaching it): `reaching` is asked
        # again for the same use by every query that follows a value back (in a script whose cells
        # rebind the same names, once per earlier cell), and each answer scans all of the name's bindings
        self._reaching: dict[int, tuple[int, int, cst.Name, Optional[tuple[int, int]], list[Binding]]] = {}
        self._index: tuple[dict[int, list[Binding]], dict[int, list[Binding]], dict[str, list[int]]] = ({}, {}, {})
        # id(expression) -> (the binding order it was answered at, what it names, the expression, kept so
        # that its id is not reused): parts and rules qualify the same calls again (a dozen times each)
        self._qualified: dict[int, tuple[int, Optional[str], cst.BaseExpression]] = {}
        # id(call) -> (binding order, calls visited, the `def` it runs, the call): `definition_of` also
        # reads which calls hand a method's instance on, recorded per call visited without moving `_order`
        # (`_calls_visited`). Each memo here keeps the node it is keyed by alive, so an id found is its own.
        self._definitions: dict[int, tuple[int, int, Optional[cst.FunctionDef], cst.Call]] = {}
        # id(call) -> (binding order and number of uses it was answered at, `method_on_instance`'s answer, the call)
        self._on_instance: dict[int, tuple[int, int, Optional[cst.FunctionDef], cst.Call]] = {}
        # ((binding order, number of uses) it was built at, name -> its uses): `uses_named`
        self._uses_by_name: Optional[tuple[tuple[int, int], dict[str, list[cst.Name]]]] = None

    # -- queries ---------------------------------------------------------------------------------------
    def definition_of(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        # asked of the same call by many parts and rules (8 times a call in a big training file): answered
        # once for each state of what it reads (bindings, uses and hand-overs only grow)
        known = self._definitions.get(id(call))
        if known is not None and known[0] == self._order and known[1] == self._calls_visited:
            return known[2]
        found = super().definition_of(call)
        self._definitions[id(call)] = (self._order, self._calls_visited, found, call)
        return found

    def method_on_instance(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        # `definition_of` asks it of every call it finds no `def` for, and most parts ask it again right after
        # (`names.definition_of(call) or method_of_instance(names, call)`): answered once while nothing is recorded
        known = self._on_instance.get(id(call))
        if known is not None and known[0] == self._order and known[1] == len(self.uses):
            return known[2]
        found = super().method_on_instance(call)
        self._on_instance[id(call)] = (self._order, len(self.uses), found, call)
        return found

    def uses_named(self, spelling: str) -> list[cst.Name]:
        """The recorded uses of names spelled so, in the order they were recorded (the file's uses split by
        name in one pass, again only once more have been recorded: ask after the traversal)."""
        if self._uses_by_name is None or self._uses_by_name[0] != (self._order, len(self.uses)):
            by_name: dict[str, list[cst.Name]] = {}
            for use in self.uses:
                by_name.setdefault(use.value, []).append(use)
            self._uses_by_name = ((self._order, len(self.uses)), by_name)
        return self._uses_by_name[1].get(spelling, [])

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
        uses = self.uses
        known = self._reaching.get(id(name))
        if known is not None and known[0] == self._order and known[1] == len(uses):
            # nothing recorded (nor a use dropped) since: the same answer (for good once the traversal is over)
            return known[4] if known[3] is None else list(known[4])
        use = uses.get(name)
        if use is None:
            return []
        spelling = name.value
        own = use.scope
        scope = own.resolving(spelling)
        bindings = scope.bindings.get(spelling)
        if scope is not own:
            if bindings is None:
                return []
            self._reaching[id(name)] = (self._order, len(uses), name, None, bindings)
            return bindings  # a closure or global: any of them, whenever it is called
        if bindings is None:
            bindings = []
        stamp = (id(scope), len(bindings))  # bindings are only added, in source order
        answer = known[4] if known is not None and known[3] == stamp else reaching_use(bindings, use)
        self._reaching[id(name)] = (self._order, len(uses), name, stamp, answer)
        return list(answer)

    def visit_Global(self, node: cst.Global) -> None:
        super().visit_Global(node)
        self._forget_resolved()

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        super().visit_Nonlocal(node)
        self._forget_resolved()

    def _forget_resolved(self) -> None:
        # a declaration moves where names resolve without recording a binding (nor moving `_order`)
        self._reaching.clear()
        self._on_instance.clear()
        self._qualified.clear()
        self._definitions.clear()

    def single_value(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The value a use holds when exactly one binding with a visible value reaches it."""
        reaching = self.reaching(name)
        if len(reaching) != 1:
            return None
        return reaching[0].bound_value

    def attribute_bindings(self, class_node: cst.ClassDef, attribute: str) -> list[Binding]:
        """`self.<attribute> = ...` in any method of the class, in source order; also `module.<attribute> = ...`
        in a module-level function of the file that a method hands its instance to (`init_buffers(self, n)`)."""
        own = self.self_attributes.get(class_node, {}).get(attribute, [])
        handed = [binding for function, position in self.instance_handed.get(class_node, ())
                  if self._module_function(function)
                  for binding in self.parameter_attributes.get((function, position), {}).get(attribute, [])]
        return sorted(own + handed, key=lambda binding: binding.order) if handed else own

    def handed_instance_class(self, function: cst.FunctionDef, parameter: str) -> Optional[cst.ClassDef]:
        """The class whose methods hand their own instance to this parameter of a module-level function
        (`def init_buffers(module, n)` called as `init_buffers(self, n)`), when every call of the file that
        shows an argument there passes such an instance, of one class."""
        params = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        if parameter not in params or not self._module_function(function.name.value):
            return None
        key = (function.name.value, params.index(parameter))
        owners = [cls for cls, handed in self.instance_handed.items() if key in handed]
        return owners[0] if len(owners) == 1 and key not in self.other_handed else None

    def _module_function(self, name: str) -> bool:
        bindings = self._module_bindings(name)
        return bool(bindings) and all(binding.kind == "def" for binding in bindings)

    def self_attribute_bindings(self, expr: cst.Attribute) -> list[Binding]:
        """`self.x = ...` anywhere in the class, for `self.x` read in one of its methods (the receiver is
        the method's own first parameter); [] for any other attribute."""
        owner = self.receiver_class(expr.value) if type(expr.value) is cst.Name else None  # exact types (node_fields.node_kinds)
        return self.attribute_bindings(owner, expr.attr.value) if owner is not None else []

    def receiver_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        """The class whose instance `name` holds when it is read in a method, or in a function nested in one,
        and is that method's own first parameter whatever it is called (`self`, `this`), or a parameter of a
        module-level function that methods of one class hand their instance to (`handed_instance_class`);
        None for any other name, another parameter, or the first parameter of a `staticmethod` or `classmethod`."""
        reaching = self.reaching(name)  # [] for a name that is not a recorded use
        if len(reaching) != 1 or reaching[0].kind != "param" or reaching[0].node is None:
            return None
        method, owner = reaching[0].scope.node, reaching[0].scope.parent
        if type(method) is not cst.FunctionDef:
            return None
        if owner is self.module_scope:
            return self.handed_instance_class(method, name.value)  # type: ignore[arg-type]
        if owner is None or not owner.is_class \
                or instance_receiver(method) != name.value:
            return None
        return owner.node  # type: ignore[return-value]

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
            return reaching_use(earlier, use)
        init = [b for b in bindings if type(b.scope.node) is cst.FunctionDef and b.scope.node.name.value == "__init__"]
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
        if depth == 0:
            # the answer reads only bindings and uses, which only grow and each move `_order`: it holds
            # until the next is recorded (for good, once the traversal is over)
            known = self._qualified.get(id(expr))
            if known is not None and known[0] == self._order:
                return known[1]
            found = self._qualify(expr, 0)
            self._qualified[id(expr)] = (self._order, found, expr)
            return found
        return self._qualify(expr, depth)

    def _qualify(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        if depth > 8:
            return None
        expr_type = type(expr)  # exact types (see node_fields.node_kinds)
        if expr_type is cst.Attribute:
            base = self._qualify(expr.value, depth + 1)  # (`qualify` keeps only depth 0's answers)
            return f"{base}.{expr.attr.value}" if base is not None else None
        if expr_type is not cst.Name:
            return None
        use = self.uses.get(expr)  # one lookup: a node's hash is a Python call
        bindings = use.scope.resolving(expr.value).bindings.get(expr.value, []) if use is not None \
            else self._module_bindings(expr.value)
        if not bindings:
            return None
        first = bindings[0]
        if first.kind == "import":  # imports, all of one and the same name
            qualified = first.qualified
            for binding in bindings:
                if binding.kind != "import" or binding.qualified != qualified:
                    return None
            return qualified
        if len(bindings) == 1 and first.kind == "assign":
            value = first.value
            if type(value) is cst.Name or type(value) is cst.Attribute:
                return self._qualify(value, depth + 1)  # type: ignore[arg-type]
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

def build_names(module: cst.Module) -> Names:
    """The binding model of a module, computed on its own (outside the engine's batched traversal)."""
    names = Names()
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([names])
    return names
