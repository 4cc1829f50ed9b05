"""Reading a libcst node's children without libcst's rebuild of the node.

libcst's `visit` rebuilds (and re-validates) every node from its visited children, even for a visitor that
changes nothing. The order of each node type's children is read once from the source of libcst's own
`_visit_and_replace_children` (the fields it visits, in the order it visits them), so it follows the installed
libcst; where an order cannot be read, the callers fall back to libcst's own traversal. `traversal.walk` runs
the model's and the rules' visitors over these fields; `children`, `code_children` and `visit_readonly` serve
the searches of a subtree.
"""

from __future__ import annotations

import collections.abc
import sys
from operator import attrgetter
from types import FunctionType, UnionType
from typing import Callable, Iterator, Optional

import libcst as cst
from libcst import MaybeSentinel
from libcst._typed_visitor import CSTTypedBaseFunctions, CSTTypedVisitorFunctions

_VISIT_HELPERS = frozenset({"visit_required", "visit_optional", "visit_sentinel", "visit_sequence",
                            "visit_iterable", "visit_body_sequence", "visit_body_iterable"})
# Whitespace, comments and punctuation: nodes that hold nothing but other such nodes. A walk skips
# them unless a visitor has a method for one of them.
TRIVIA_LEAVES = frozenset({cst.SimpleWhitespace, cst.Newline, cst.Comment})


class _UnknownOrder(Exception):
    """The visiting order of a node type could not be read from libcst's source."""


# node type -> ((field, visited only when not None), ...) in libcst's visiting order
_FIELD_ORDER: dict[type, tuple[tuple[str, bool], ...]] = {}


def field_order(cls: type) -> tuple[tuple[str, bool], ...]:
    """The child fields libcst visits for a node type, in its order; with each, whether libcst skips
    the field altogether (no attribute callbacks) when it is None."""
    order = _FIELD_ORDER.get(cls)
    if order is None:
        order = _FIELD_ORDER[cls] = _read_field_order(cls)
    return order


def _read_field_order(cls: type) -> tuple[tuple[str, bool], ...]:
    method = getattr(cls, "_visit_and_replace_children", None)
    if method is None or method is cst.CSTNode._visit_and_replace_children:
        raise _UnknownOrder(cls.__name__)
    order = _ORDER_OF_METHOD.get(method)
    if order is None:
        order = _ORDER_OF_METHOD[method] = _read_method_order(cls, method)
    return order


# `_visit_and_replace_children` -> its order: libcst's dataclasses with slots are classes made anew from
# the classes defined, and both are subclasses of CSTNode, sharing their methods (half the types seen)
_ORDER_OF_METHOD: dict[object, tuple[tuple[str, bool], ...]] = {}


def _read_method_order(cls: type, method: object) -> tuple[tuple[str, bool], ...]:
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    except (OSError, TypeError, SyntaxError):
        raise _UnknownOrder(cls.__name__) from None
    fields: list[tuple[str, bool]] = []
    seen: set[str] = set()

    def scan(node: ast.AST, optional_branch: bool) -> None:
        if isinstance(node, ast.IfExp):
            # `visit_x(...) if cond else None`: no callbacks at all when the field holds None
            maybe = any(isinstance(side, ast.Constant) and side.value is None for side in (node.body, node.orelse))
            for child in (node.test, node.body, node.orelse):
                scan(child, optional_branch or maybe)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _VISIT_HELPERS:
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant) or not isinstance(node.args[1].value, str):
                raise _UnknownOrder(cls.__name__)
            name = node.args[1].value
            if name not in seen:
                seen.add(name)
                fields.append((name, optional_branch))
        # `ast.iter_child_nodes`, less the leaves that hold no call (names, constants, their contexts)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for child in value:
                    if isinstance(child, ast.AST) and type(child) not in leaves:
                        scan(child, optional_branch)
            elif isinstance(value, ast.AST) and type(value) not in leaves:
                scan(value, optional_branch)

    leaves = {ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del}
    scan(tree, False)
    return tuple(fields)


def _trivia_types() -> frozenset[type]:
    import libcst._nodes.op as op_nodes
    import libcst._nodes.whitespace as whitespace_nodes

    found = set()
    for module in (op_nodes, whitespace_nodes):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, cst.CSTNode) and value.__module__ == module.__name__:
                found.add(value)
    return frozenset(found)


_TRIVIA: frozenset[type] | None = None
_READABLE: bool | None = None  # whether the order of every node type could be read


def all_orders_readable() -> bool:
    """Read the order of every concrete node type once per process, before any walk calls back."""
    global _READABLE
    if _READABLE is None:
        pending, concrete = [cst.CSTNode], []
        while pending:
            for sub in pending.pop().__subclasses__():
                pending.append(sub)
                if sub.__module__.startswith("libcst.") and "_visit_and_replace_children" in vars(sub):
                    concrete.append(sub)
        try:
            for cls in concrete:
                field_order(cls)
            _READABLE = True
        except _UnknownOrder:
            _READABLE = False
    return _READABLE


_NODE_TYPES: dict[type, bool] = {}  # type -> whether it is a CSTNode (an ABC: isinstance is slow)


def is_node_type(kind: type) -> bool:
    """`issubclass(kind, cst.CSTNode)`, from the same table as `is_node`."""
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


def is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)`, answered per type from a table (a walk asks it of every field)."""
    kind = type(value)
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = isinstance(value, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children` (every child node, whitespace included, in libcst's visiting order) without
    libcst's rebuild of the node."""
    read = _CHILD_FIELDS.get(type(node))
    if read is None:
        if not all_orders_readable():
            return list(node.children)
        read = _child_fields(type(node))
    found: list[cst.CSTNode] = []
    node_types = _NODE_TYPES
    for value in read(node):
        known = node_types.get(type(value))
        if known is None:
            known = is_node(value)
        if known:
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(value)
    return found


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`children(node)` less the trivia (whitespace, comments, punctuation, operators: node types that hold
    nothing but other such nodes), in the same order: for a search of a subtree that looks at no trivia
    node type. Most of a tree's nodes are trivia (about 60% on the bench corpus), so such a search visits
    a third of the nodes."""
    skipped = _TRIVIA or trivia()
    read = _CODE_FIELDS.get(type(node))
    if read is None:
        if not all_orders_readable():
            return [child for child in node.children if type(child) not in skipped]
        read = _code_fields(type(node))
    found: list[cst.CSTNode] = []
    node_types = _NODE_TYPES
    for value in read(node):
        kind = type(value)
        if kind in skipped:
            continue
        known = node_types.get(kind)
        if known is None:
            known = is_node(value)
        if known:
            found.append(value)
        elif kind is list or kind is tuple or isinstance(value, (tuple, list)):
            for child in value:
                if type(child) not in skipped:
                    found.append(child)
    return found


def code_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it but the trivia (whitespace, punctuation), in a visitor's order, without a
    visitor's dispatch: for a search that looks at no trivia node type."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(code_children(current)))

def trivia() -> frozenset[type]:
    """Whitespace, comments and punctuation node types (`_trivia_types`), read once."""
    global _TRIVIA
    if _TRIVIA is None:
        _TRIVIA = _trivia_types()
    return _TRIVIA


# node type -> a function giving the values of its visited fields, in order (`field_order`)
_CHILD_FIELDS: dict[type, Callable[[cst.CSTNode], tuple]] = {}


def _child_fields(cls: type) -> Callable[[cst.CSTNode], tuple]:
    read = _CHILD_FIELDS[cls] = fields_reader(tuple(field for field, _ in field_order(cls)))
    return read


def fields_reader(names: tuple[str, ...]) -> Callable[[cst.CSTNode], tuple]:
    """A function giving a node's values of these fields, as a tuple."""
    if not names:
        return _no_fields
    if len(names) == 1:
        name = names[0]
        return lambda node: (getattr(node, name),)  # attrgetter of one name gives no tuple
    return attrgetter(*names)


# node type -> the same, less the fields that can hold trivia only (`_trivia_only`): `code_children`'s
_CODE_FIELDS: dict[type, Callable[[cst.CSTNode], tuple]] = {}


def _code_fields(cls: type) -> Callable[[cst.CSTNode], tuple]:
    """A node type's visited fields that may hold a node other than trivia, as its type hints say (a call's
    whitespace and a binary operation's operator are never looked at); every field where they cannot be read."""
    import typing

    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # hints that do not resolve: every field
        hints = {}
    names = tuple(field for field, _ in field_order(cls) if not _trivia_only(hints.get(field, typing.Any)))
    read = _CODE_FIELDS[cls] = fields_reader(names)
    return read


def _trivia_only(hint: object) -> bool:
    """Whether a field's type hint admits no node but trivia (`trivia()`), nor a list holding other nodes.
    False for a hint not understood."""
    held = node_types_held(hint)
    return held is not None and held <= trivia()


def node_types_held(hint: object) -> Optional[frozenset[type]]:
    """The node types a value of a field declared with this type hint may be or hold (a sequence's elements);
    None when the declaration is not one this reads. libcst declares every field's type (`lpar:
    Sequence[LeftParen]`, `comma: Comma | MaybeSentinel`), and its parser builds nodes as declared."""
    import typing

    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is UnionType:
        held: set[type] = set()
        for member in typing.get_args(hint):
            inner = node_types_held(member)
            if inner is None:
                return None
            held |= inner
        return frozenset(held)
    if origin in (collections.abc.Sequence, list, tuple):
        members = [member for member in typing.get_args(hint) if member is not Ellipsis]
        return node_types_held(typing.Union[tuple(members)]) if members else None
    if origin is typing.Literal:
        return frozenset()
    if hint in (type(None), str, MaybeSentinel):
        return frozenset()
    if isinstance(hint, type) and issubclass(hint, cst.CSTNode):
        # less the classes libcst's `add_slots` replaced (still listed as subclasses, never built)
        return frozenset(kind for kind in node_kinds(hint) if getattr(sys.modules[kind.__module__], kind.__name__, None) is kind)
    return None


def node_kinds(*classes: type) -> frozenset[type]:
    """The given libcst node classes and all their subclasses, for `type(node) in kinds` in place of
    `isinstance(node, classes)`: libcst's node classes are ABCs, so every isinstance that misses runs
    `ABCMeta.__instancecheck__` in Python (millions of calls in a scan). libcst defines all its node
    classes when it is imported, and stabfix subclasses none of them, so the set is complete."""
    found: set[type] = set()
    pending = list(classes)
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)


def child_fields(cls: type) -> Callable[[cst.CSTNode], tuple]:
    """A function giving the values of a node type's visited fields, in libcst's order (`field_order`)."""
    return _CHILD_FIELDS.get(cls) or _child_fields(cls)


def _no_fields(node: cst.CSTNode) -> tuple:
    return ()


def visit_readonly(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads (a `CSTVisitor`): the same callbacks in the
    same order, `visit_*` returning False still skips the children, and no node is rebuilt."""
    cls = type(visitor)
    callbacks = cls.__dict__.get("_readonly_callbacks")  # set once the class passed the tests below
    if callbacks is None:
        if not isinstance(visitor, cst.CSTVisitor) or not all_orders_readable():
            node.visit(visitor)
            return
        callbacks = _ReadonlyCallbacks(cls)
    if callbacks.attributes or callbacks.shadowed(visitor):
        _visit_every_callback(node, visitor)
        return
    visits, leaves, lookup = callbacks.visits, callbacks.leaves, callbacks.lookup
    on_visit = visitor.on_visit if callbacks.own_on_visit else None
    on_leave = visitor.on_leave if callbacks.own_on_leave else None
    if callbacks.skips_trivia:
        skipped, readers, read_fields = _TRIVIA or trivia(), _CODE_FIELDS, _code_fields
    else:
        skipped, readers, read_fields = frozenset(), _CHILD_FIELDS, _child_fields
    node_types = _NODE_TYPES

    def visit(current: cst.CSTNode) -> None:
        kind = type(current)
        if on_visit is None:
            method = visits.get(kind, _UNSET)
            if method is _UNSET:
                method = lookup(visits, "visit_", kind)
            enter = method is None or method(visitor, current) is not False
        else:
            enter = on_visit(current)
        if enter:
            read = readers.get(kind) or read_fields(kind)
            for value in read(current):
                value_kind = type(value)
                if value_kind in skipped:
                    continue
                known = node_types.get(value_kind)
                if known is None:
                    known = is_node(value)
                if known:
                    visit(value)
                elif value_kind is tuple or value_kind is list or isinstance(value, (tuple, list)):
                    for child in value:
                        if type(child) not in skipped:
                            visit(child)
        if on_leave is None:
            method = leaves.get(kind, _UNSET)
            if method is _UNSET:
                method = lookup(leaves, "leave_", kind)
            if method is not None:
                method(visitor, current)
        else:
            on_leave(current)

    try:
        visit(node)
    finally:
        visit = None  # type: ignore[assignment]  # it refers to itself: a cycle holding the visitors


_UNSET = object()
_STUBS = (CSTTypedVisitorFunctions, CSTTypedBaseFunctions)  # libcst's no-op `visit_*`/`leave_*` for every name


class _ReadonlyCallbacks:
    """What a read-only walk has to call for one visitor class, read once per class (kept on the class).

    libcst's `on_visit`/`on_leave` look up `visit_<Type>`/`leave_<Type>` by name on every node, and
    `on_visit_attribute`/`on_leave_attribute` look up `visit_<Type>_<field>` for every field of every node,
    although most visitors define a handful of `visit_<Type>` and no attribute callback at all; the names
    it finds otherwise are libcst's no-op stubs. A walk for such a class calls the class's own methods
    from a table by node type, and skips the trivia (whitespace, punctuation: subtrees of trivia only)
    when the class has no callback for a trivia type: the callbacks made are the same, in the same order.
    Read once per class: a method assigned to the class after its first walk is not seen."""

    def __init__(self, cls: type) -> None:
        defined = set()
        for klass in cls.__mro__:
            if klass in _STUBS:
                continue
            for name, value in vars(klass).items():
                if name.startswith(("visit_", "leave_")) and not getattr(value, "_is_no_op", False):
                    defined.add(name)
        self.cls = cls
        self.own_on_visit = cls.on_visit is not cst.CSTVisitor.on_visit
        self.own_on_leave = cls.on_leave is not cst.CSTVisitor.on_leave
        # a `visit_<Type>_<field>` (node type names hold no underscore), or own attribute hooks
        self.attributes = (
            cls.on_visit_attribute is not cst.CSTVisitor.on_visit_attribute
            or cls.on_leave_attribute is not cst.CSTVisitor.on_leave_attribute
            or any("_" in name.partition("_")[2] for name in defined)
            or hasattr(cls, "__getattr__") or cls.__getattribute__ is not object.__getattribute__
        )
        trivia_names = {prefix + kind.__name__ for kind in trivia() for prefix in ("visit_", "leave_")}
        self.skips_trivia = not (self.own_on_visit or self.own_on_leave or self.attributes or defined & trivia_names)
        self.visits: dict[type, Optional[Callable]] = {}
        self.leaves: dict[type, Optional[Callable]] = {}
        setattr(cls, "_readonly_callbacks", self)

    def lookup(self, table: dict, prefix: str, kind: type) -> Optional[Callable]:
        """The class's `visit_<Type>` (or `leave_<Type>`) as a function of (visitor, node); None for
        none or a no-op stub."""
        name = prefix + kind.__name__
        method: Optional[Callable] = None
        for klass in self.cls.__mro__:
            if name in vars(klass):
                raw = vars(klass)[name]
                if raw is None:
                    method = None  # libcst treats a None found by name as no method
                elif type(raw) is FunctionType:
                    method = None if getattr(raw, "_is_no_op", False) else raw
                else:  # a static or class method, a descriptor: as libcst gets it, from the instance
                    method = lambda visitor, node: getattr(visitor, name)(node)  # noqa: E731
                break
        table[kind] = method
        return method

    @staticmethod
    def shadowed(visitor: cst.CSTVisitor) -> bool:
        """An instance attribute named like a callback, which libcst's look-up by name would find."""
        attributes = getattr(visitor, "__dict__", None)
        return bool(attributes) and any(name.startswith(("visit_", "leave_")) for name in attributes)


def _visit_every_callback(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    on_visit_attribute, on_leave_attribute = visitor.on_visit_attribute, visitor.on_leave_attribute

    def visit(current: cst.CSTNode) -> None:
        if on_visit(current):
            for field, when_set in field_order(type(current)):
                value = getattr(current, field)
                if when_set and value is None:
                    continue
                on_visit_attribute(current, field)
                if is_node(value):
                    visit(value)
                elif isinstance(value, (tuple, list)):
                    for child in value:
                        visit(child)
                on_leave_attribute(current, field)
        on_leave(current)

    try:
        visit(node)
    finally:
        visit = None  # type: ignore[assignment]  # it refers to itself: a cycle holding the visitors
