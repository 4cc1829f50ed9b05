"""Reading a libcst node's children without libcst's rebuild of the node.

libcst's `visit` rebuilds (and re-validates) every node from its visited children, even for a visitor that
changes nothing. The order of each node type's children is read once from the source of libcst's own
`_visit_and_replace_children` (the fields it visits, in the order it visits them), so it follows the installed
libcst; where an order cannot be read, the callers fall back to libcst's own traversal. `traversal.walk` runs
the model's and the rules' visitors over these fields; `children`, `code_children` and `visit_readonly` serve
the searches of a subtree.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Callable

import libcst as cst

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
    import ast
    import inspect
    import textwrap

    method = getattr(cls, "_visit_and_replace_children", None)
    if method is None or method is cst.CSTNode._visit_and_replace_children:
        raise _UnknownOrder(cls.__name__)
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
        for child in ast.iter_child_nodes(node):
            scan(child, optional_branch)

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
    read = _CHILD_FIELDS.get(type(node))
    if read is None:
        if not all_orders_readable():
            return [child for child in node.children if type(child) not in skipped]
        read = _child_fields(type(node))
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


def trivia() -> frozenset[type]:
    """Whitespace, comments and punctuation node types (`_trivia_types`), read once."""
    global _TRIVIA
    if _TRIVIA is None:
        _TRIVIA = _trivia_types()
    return _TRIVIA


# node type -> a function giving the values of its visited fields, in order (`field_order`)
_CHILD_FIELDS: dict[type, Callable[[cst.CSTNode], tuple]] = {}


def _child_fields(cls: type) -> Callable[[cst.CSTNode], tuple]:
    names = tuple(field for field, _ in field_order(cls))
    if not names:
        read = _no_fields
    elif len(names) == 1:
        name = names[0]
        read = lambda node: (getattr(node, name),)  # noqa: E731 (attrgetter of one name gives no tuple)
    else:
        read = attrgetter(*names)
    _CHILD_FIELDS[cls] = read
    return read


def child_fields(cls: type) -> Callable[[cst.CSTNode], tuple]:
    """A function giving the values of a node type's visited fields, in libcst's order (`field_order`)."""
    return _CHILD_FIELDS.get(cls) or _child_fields(cls)


def _no_fields(node: cst.CSTNode) -> tuple:
    return ()


def visit_readonly(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads (a `CSTVisitor`): the same callbacks in the
    same order, `visit_*` returning False still skips the children, and no node is rebuilt."""
    if not isinstance(visitor, cst.CSTVisitor) or not all_orders_readable():
        node.visit(visitor)
        return
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

