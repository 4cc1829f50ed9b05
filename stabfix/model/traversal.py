"""Running many batchable visitors in one traversal of a file.

The model's parts and the rules' checkers all ride in the same pass. Parts come first: on the way
down they see a node before any checker does, and on the way up they leave it last, so what a part
knows about the enclosing scope still holds while a checker's `leave_*` runs.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst

VisitorMethod = Callable[[cst.CSTNode], None]

_METHOD_NAMES: dict[type, tuple[str, ...]] = {}


def merged_visitor_methods(visitors: Sequence[cst.BatchableCSTVisitor]) -> dict[str, VisitorMethod]:
    """One method table: `visit_*` in the given order, `leave_*` in reverse."""
    tables = [_method_table(visitor) for visitor in visitors]
    merged: dict[str, VisitorMethod] = {}
    for name in sorted({name for table in tables for name in table}):
        methods = [table[name] for table in tables if name in table]
        if name.startswith("leave_"):
            methods.reverse()
        merged[name] = methods[0] if len(methods) == 1 else _chain(methods)
    return merged


class MergedVisitor(cst.BatchableCSTVisitor):
    """The visitors of one file as a single batchable visitor."""

    def __init__(self, visitors: Sequence[cst.BatchableCSTVisitor]) -> None:
        super().__init__()
        self._methods = merged_visitor_methods(visitors)

    def get_visitors(self) -> dict[str, VisitorMethod]:
        return self._methods


def _method_table(visitor: cst.BatchableCSTVisitor) -> dict[str, VisitorMethod]:
    if type(visitor).get_visitors is not cst.BatchableCSTVisitor.get_visitors:
        return dict(visitor.get_visitors())  # a visitor that composes its own table
    return {name: getattr(visitor, name) for name in _visitor_method_names(type(visitor))}


def _visitor_method_names(cls: type) -> tuple[str, ...]:
    """The visit_/leave_ methods a visitor class really defines (libcst's no-op stubs excluded), cached
    per class: `BatchableCSTVisitor.get_visitors` inspects every member on every call, which costs more
    than a small file's whole traversal."""
    names = _METHOD_NAMES.get(cls)
    if names is None:
        names = tuple(
            name
            for name in dir(cls)
            if name.startswith(("visit_", "leave_")) and not getattr(getattr(cls, name), "_is_no_op", False)
        )
        _METHOD_NAMES[cls] = names
    return names


def _chain(methods: list[VisitorMethod]) -> VisitorMethod:
    def run(node: cst.CSTNode) -> None:
        for method in methods:
            method(node)

    return run
