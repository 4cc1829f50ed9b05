"""Running many batchable visitors in one traversal of a file.

The model's parts and the rules' checkers all ride in the same pass. Parts come first: on the way
down they see a node before any checker does, and on the way up they leave it last, so what a part
knows about the enclosing scope still holds while a checker's `leave_*` runs.
"""

from __future__ import annotations

import typing
from typing import Callable, Iterable, Optional, Sequence

import libcst as cst

from stabfix.model.source.node_fields import (
    TRIVIA_LEAVES,
    all_orders_readable,
    child_fields,
    children,
    field_order,
    fields_reader,
    is_node_type,
    node_types_held,
    trivia,
)

VisitorMethod = Callable[[cst.CSTNode], None]

_METHOD_NAMES: dict[type, tuple[str, ...]] = {}


class Isolation:
    """Fault isolation for one walk: a visitor whose method raises is dropped for the rest of the walk,
    together with the visitors `dependents` names for it (those reading what it builds), while every
    other visitor goes on. Guarding costs a call per callback, so a walk is only isolated when an
    unguarded walk of the same file has already failed."""

    def __init__(self, dependents: Callable[[cst.BatchableCSTVisitor], Iterable[cst.BatchableCSTVisitor]]) -> None:
        self.dependents = dependents
        self.failures: list[tuple[cst.BatchableCSTVisitor, Exception]] = []  # the visitor that raised, what
        self.dropped: set[int] = set()  # ids of the visitors no longer called

    def fail(self, visitor: cst.BatchableCSTVisitor, error: Exception) -> None:
        self.failures.append((visitor, error))
        self.dropped.add(id(visitor))
        self.dropped.update(id(dependent) for dependent in self.dependents(visitor))

    def guard(self, visitor: cst.BatchableCSTVisitor, method: VisitorMethod) -> VisitorMethod:
        dropped, key = self.dropped, id(visitor)

        def guarded(node: cst.CSTNode) -> None:
            if key in dropped:
                return
            try:
                method(node)
            except (RecursionError, MemoryError):
                raise  # the file itself is too deep or too big, not one visitor's fault
            except Exception as error:
                self.fail(visitor, error)

        return guarded


def merged_visitor_methods(
    visitors: Sequence[cst.BatchableCSTVisitor], isolation: Optional[Isolation] = None
) -> dict[str, VisitorMethod]:
    """One method table: `visit_*` in the given order, `leave_*` in reverse; each method guarded by
    `isolation` when given."""
    tables = [_method_table(visitor) for visitor in visitors]
    if isolation is not None:
        tables = [
            {name: isolation.guard(visitor, method) for name, method in table.items()}
            for visitor, table in zip(visitors, tables)
        ]
    merged: dict[str, VisitorMethod] = {}
    for name in sorted({name for table in tables for name in table}):
        methods = [table[name] for table in tables if name in table]
        if name.startswith("leave_"):
            methods.reverse()
        merged[name] = methods[0] if len(methods) == 1 else _chain(methods)
    return merged


class MergedVisitor(cst.BatchableCSTVisitor):
    """The visitors of one file as a single batchable visitor."""

    def __init__(self, visitors: Sequence[cst.BatchableCSTVisitor], isolation: Optional[Isolation] = None) -> None:
        super().__init__()
        self._methods = merged_visitor_methods(visitors, isolation)

    def get_visitors(self) -> dict[str, VisitorMethod]:
        return self._methods


def _method_table(visitor: cst.BatchableCSTVisitor) -> dict[str, VisitorMethod]:
    if type(visitor).get_visitors is not cst.BatchableCSTVisitor.get_visitors:
        return dict(visitor.get_visitors())  # a visitor that composes its own table
    return {name: getattr(visitor, name) for name in _visitor_method_names(type(visitor))}


def _visitor_method_names(cls: type) -> tuple[str, ...]:
    """The visit_/leave_ methods a visitor class really defines (libcst's no-op stubs excluded), in `dir`'s
    order, cached per class: `BatchableCSTVisitor.get_visitors` inspects every member on every call, which
    costs more than a small file's whole traversal. A method is looked for in each class of the MRO's own
    members: libcst's visitor bases declare some 1,500 stubs, sorted out once per base, not once per visitor
    class (as `dir` of each class did: a tenth of a small file's traversal, once per process)."""
    names = _METHOD_NAMES.get(cls)
    if names is None:
        candidates: set[str] = set()
        for klass in cls.__mro__:
            candidates.update(_own_methods(klass))
        names = tuple(
            name for name in sorted(candidates) if not getattr(getattr(cls, name), "_is_no_op", False)
        )
        _METHOD_NAMES[cls] = names
    return names


_OWN_METHODS: dict[type, frozenset[str]] = {}


def _own_methods(klass: type) -> frozenset[str]:
    """The visit_/leave_ members a class itself declares, less libcst's no-op stubs among them: where
    `getattr` on a visitor class finds a method that is not a stub, it is one of these of the first class
    of the MRO that declares the name."""
    found = _OWN_METHODS.get(klass)
    if found is None:
        found = _OWN_METHODS[klass] = frozenset(
            name
            for name in vars(klass)
            if name.startswith(("visit_", "leave_")) and not getattr(getattr(klass, name), "_is_no_op", False)
        )
    return found


def _chain(methods: list[VisitorMethod]) -> VisitorMethod:
    if len(methods) == 2:  # the common case, without the loop
        first, second = methods

        def run_two(node: cst.CSTNode) -> None:
            first(node)
            second(node)

        return run_two
    if len(methods) == 3:
        first, second, third = methods

        def run_three(node: cst.CSTNode) -> None:
            first(node)
            second(node)
            third(node)

        return run_three

    def run(node: cst.CSTNode) -> None:
        for method in methods:
            method(node)

    return run


# --- A traversal that only reads the tree ---------------------------------------------------------
#
# libcst's `visit` rebuilds (and re-validates) every node from its visited children, even for a
# visitor that changes nothing: on the bench corpus that costs about as much as the parse. `walk`
# calls the same `visit_*`/`leave_*` and attribute methods, in the same order, on the same nodes,
# without rebuilding anything. The order of each node type's children is read once from the source
# of libcst's own `_visit_and_replace_children` (the fields it visits, in the order it visits them),
# so it follows the installed libcst; a node type whose order cannot be read makes `walk` fall back



def walk(
    module: cst.CSTNode,
    visitors: Sequence[cst.BatchableCSTVisitor],
    isolation: Optional[Isolation] = None,
    parents: Optional[dict[int, cst.CSTNode]] = None,
) -> None:
    """Run batchable visitors over a tree in one read-only pass: what `MetadataWrapper.visit_batched`
    does for visitors without metadata dependencies, without rebuilding the tree. Without `isolation`
    the first exception of any visitor ends the walk; with it, see `Isolation`. `parents`, when given,
    gets id(node) -> parent for every node the walk visits, each before any visitor sees the node."""
    if not all_orders_readable():
        from libcst.metadata import MetadataWrapper

        if parents is not None:
            _record_parents(module, parents)
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(visitors, isolation)])
        return
    layout = _layout_of(visitors) if isolation is None else None
    if layout is not None:
        walker = _Walk(layout.bind(visitors), layout.skip)
    else:
        methods = merged_visitor_methods(visitors, isolation)
        walker = _Walk(_plans_from_table(methods), _skipped(frozenset(name.split("_", 2)[1] for name in methods)))
    if parents is None:
        walker.run(module)
    else:
        walker.run_recording(module, parents)


def _skipped(visited_types: frozenset[str]) -> frozenset[type]:
    """The trivia node types a walk need not enter, given the names of the node types visitors have methods for."""
    every = trivia()
    if any(kind.__name__ in visited_types for kind in every - TRIVIA_LEAVES):
        return frozenset(kind for kind in TRIVIA_LEAVES if kind.__name__ not in visited_types)
    return frozenset(kind for kind in every if kind.__name__ not in visited_types)


# A node type's plan: (visit method, leave method, ((field, visited only when set, visit-field method,
# leave-field method), ...)), each method None when no visitor has one.
Plan = tuple
PlanOf = Callable[[type], Plan]


def _plans_from_table(methods: dict[str, VisitorMethod]) -> PlanOf:
    """Plans read from a merged method table (`merged_visitor_methods`)."""

    def plan_of(cls: type) -> Plan:
        name = cls.__name__
        fields = tuple(
            (field, when_set, methods.get(f"visit_{name}_{field}"), methods.get(f"leave_{name}_{field}"))
            for field, when_set in field_order(cls)
        )
        return methods.get(f"visit_{name}"), methods.get(f"leave_{name}"), fields

    return plan_of


class _Layout:
    """Which visitors of a list of visitor classes have which methods, for every node type: the part of
    `merged_visitor_methods` that depends only on the classes, computed once per list of classes (a
    scan runs the same few lists on every file). Each file's walk then binds the methods of the node
    types it meets to its own visitors, with `getattr` as `merged_visitor_methods` does."""

    def __init__(self, classes: tuple[type, ...]) -> None:
        owners: dict[str, list[int]] = {}
        for index, cls in enumerate(classes):
            for name in _visitor_method_names(cls):
                owners.setdefault(name, []).append(index)
        for name, indices in owners.items():
            if name.startswith("leave_"):
                indices.reverse()
        self.owners = {name: tuple(indices) for name, indices in owners.items()}
        self.skip = _skipped(frozenset(name.split("_", 2)[1] for name in owners))
        # node type -> (visit owners, leave owners, ((field, when set, visit-field owners, leave-field owners), ...))
        self.static: dict[type, tuple] = {}

    def static_plan(self, cls: type) -> tuple:
        plan = self.static.get(cls)
        if plan is None:
            owners, name = self.owners, cls.__name__

            def named(method: str) -> Optional[tuple[str, tuple[int, ...]]]:
                found = owners.get(method)
                return (method, found) if found else None

            fields = tuple(
                (field, when_set, named(f"visit_{name}_{field}"), named(f"leave_{name}_{field}"))
                for field, when_set in field_order(cls)
            )
            plan = self.static[cls] = (named(f"visit_{name}"), named(f"leave_{name}"), fields)
        return plan

    def bind(self, visitors: Sequence[cst.BatchableCSTVisitor]) -> PlanOf:
        static_plan = self.static_plan

        def method(owned: Optional[tuple[str, tuple[int, ...]]]) -> Optional[VisitorMethod]:
            if owned is None:
                return None
            name, indices = owned
            if len(indices) == 1:
                return getattr(visitors[indices[0]], name)
            return _chain([getattr(visitors[index], name) for index in indices])

        def plan_of(cls: type) -> Plan:
            enter, leave, fields = static_plan(cls)
            return method(enter), method(leave), tuple(
                (field, when_set, method(enter_field), method(leave_field))
                for field, when_set, enter_field, leave_field in fields
            )

        return plan_of


_LAYOUTS: dict[tuple[type, ...], _Layout] = {}


def _layout_of(visitors: Sequence[cst.BatchableCSTVisitor]) -> Optional[_Layout]:
    """The cached layout of these visitors' classes; None when a visitor composes its own method table
    (then only the instance knows its methods)."""
    classes = tuple(type(visitor) for visitor in visitors)
    layout = _LAYOUTS.get(classes)
    if layout is None:
        if any(cls.get_visitors is not cst.BatchableCSTVisitor.get_visitors for cls in classes):
            return None
        layout = _LAYOUTS[classes] = _Layout(classes)
    return layout


def _record_parents(module: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> None:
    stack = [module]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)


# What a walk does with a field's value, by the value's type (`_Walk.action`)
_PASS, _VISIT, _EACH = 0, 1, 2  # nothing (None, a sentinel, a skipped node); visit it; visit each node it holds


class _Walk:
    def __init__(self, plan_of: PlanOf, skip: frozenset[type]) -> None:
        self.plan_of = plan_of
        self.skip = skip
        self.plans: dict[type, tuple] = {}
        self.actions = _ACTIONS.get(skip)
        if self.actions is None:
            self.actions = _ACTIONS[skip] = {}

    def plan(self, cls: type) -> tuple:
        """The node type's plan, with the function reading its fields' values when no visitor has a
        method for any of its fields (then the walk needs neither their names nor the None check). A
        field that can only hold skipped nodes (`Call.whitespace_after_func`, `Arg.comma`) is not read
        unless a visitor has a method for it: about a third of the values a walk would read."""
        enter, leave, fields = self.plan_of(cls)
        walked = _walked_fields(cls, self.skip)
        fields = tuple(entry for entry in fields if entry[0] in walked or entry[2] is not None or entry[3] is not None)
        if all(enter_field is None and leave_field is None for _, _, enter_field, leave_field in fields):
            names = tuple(field for field, _, _, _ in fields)
            read = child_fields(cls) if len(names) == len(field_order(cls)) else fields_reader(names)
            plan = self.plans[cls] = (enter, leave, fields, read)
        else:
            plan = self.plans[cls] = (enter, leave, fields, None)
        return plan

    def action(self, kind: type) -> int:
        """What the walk does with a field value of this type, learnt once per type and set of skipped
        types: one dict lookup per field then answers "a node to visit?", "a skipped node?" and "a
        sequence?" (libcst's node classes are ABCs, so asking isinstance per value would be slow)."""
        if is_node_type(kind):
            action = _PASS if kind in self.skip else _VISIT
        else:
            action = _EACH if issubclass(kind, (tuple, list)) else _PASS
        self.actions[kind] = action
        return action

    def run(self, module: cst.CSTNode) -> None:
        skip, plans, plan_of, actions, action_of = self.skip, self.plans, self.plan, self.actions, self.action

        def visit(node: cst.CSTNode) -> None:
            try:
                enter, leave, fields, read = plans[type(node)]
            except KeyError:
                enter, leave, fields, read = plan_of(type(node))
            if enter is not None:
                enter(node)
            if read is not None:
                for value in read(node):  # a None is neither a node nor a sequence: skipped as when_set would
                    try:
                        action = actions[type(value)]
                    except KeyError:
                        action = action_of(type(value))
                    if action == _VISIT:
                        visit(value)
                    elif action:
                        for child in value:
                            if type(child) not in skip:
                                visit(child)
                if leave is not None:
                    leave(node)
                return
            for field, when_set, enter_field, leave_field in fields:
                value = getattr(node, field)
                if when_set and value is None:
                    continue
                if enter_field is not None:
                    enter_field(node)
                try:
                    action = actions[type(value)]
                except KeyError:
                    action = action_of(type(value))
                if action == _VISIT:
                    visit(value)
                elif action:
                    for child in value:
                        if type(child) not in skip:
                            visit(child)
                if leave_field is not None:
                    leave_field(node)
            if leave is not None:
                leave(node)

        try:
            visit(module)
        finally:
            visit = None  # type: ignore[assignment]  # it refers to itself: a cycle holding the visitors

    def run_recording(self, module: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> None:
        """`run`, recording each visited node's parent (a copy of `run`'s loop, so that a walk without
        `parents` pays nothing for them)."""
        skip, plans, plan_of, actions, action_of = self.skip, self.plans, self.plan, self.actions, self.action

        def visit(node: cst.CSTNode) -> None:
            try:
                enter, leave, fields, read = plans[type(node)]
            except KeyError:
                enter, leave, fields, read = plan_of(type(node))
            if enter is not None:
                enter(node)
            if read is not None:
                for value in read(node):  # a None is neither a node nor a sequence: skipped as when_set would
                    try:
                        action = actions[type(value)]
                    except KeyError:
                        action = action_of(type(value))
                    if action == _VISIT:
                        parents[id(value)] = node
                        visit(value)
                    elif action:
                        for child in value:
                            if type(child) not in skip:
                                parents[id(child)] = node
                                visit(child)
                if leave is not None:
                    leave(node)
                return
            for field, when_set, enter_field, leave_field in fields:
                value = getattr(node, field)
                if when_set and value is None:
                    continue
                if enter_field is not None:
                    enter_field(node)
                try:
                    action = actions[type(value)]
                except KeyError:
                    action = action_of(type(value))
                if action == _VISIT:
                    parents[id(value)] = node
                    visit(value)
                elif action:
                    for child in value:
                        if type(child) not in skip:
                            parents[id(child)] = node
                            visit(child)
                if leave_field is not None:
                    leave_field(node)
            if leave is not None:
                leave(node)

        try:
            visit(module)
        finally:
            visit = None  # type: ignore[assignment]  # it refers to itself: a cycle holding the visitors


_ACTIONS: dict[frozenset[type], dict[type, int]] = {}  # skipped types -> value type -> `_Walk.action`

_WALKED_FIELDS: dict[tuple[type, frozenset[type]], frozenset[str]] = {}


def _walked_fields(cls: type, skip: frozenset[type]) -> frozenset[str]:
    """The fields of a node type (`field_order`) whose declared type may hold a node that a walk skipping
    `skip` visits: libcst declares every field's type (`lpar: Sequence[LeftParen]`, `comma: Comma |
    MaybeSentinel`), and the parser builds nodes as declared. A field whose type cannot be read is kept."""
    key = (cls, skip)
    found = _WALKED_FIELDS.get(key)
    if found is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # a type libcst declares by a name this module cannot resolve: read every field
            hints = {}
        kept = set()
        for field, _ in field_order(cls):
            held = node_types_held(hints[field]) if field in hints else None
            if held is None or not held <= skip:
                kept.add(field)
        found = _WALKED_FIELDS[key] = frozenset(kept)
    return found
