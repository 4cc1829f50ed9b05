"""What the model may make of the names a file spells, as structural gates ask it: qualified names, and the other
files of the scan they lead to.

`qualified_names(shape, expr)` is every name `Names.qualify` may give an expression (an import, or a plain alias
of a name, then attributes: `comm.sync_all` -> `pkg.comm.sync_all`), `imported_names(shape, expr)` every name
`ImportTracker.qualify` may give it (imports only). Both are supersets: every import and alias of a name counts,
whatever scope binds it and whichever binding a read sees.

The project questions resolve such names as the model's `project.resolve` does (through re-exports, any number of
files) and record what the index consulted in the view's `consulted`, so a change in a file read (the helper's, a
re-exporting `__init__.py`) or in a module lookup rescans this file. `callees_spell(shape, *groups)`: whether a
definition in another file of the scan that a call of the file may run (`Summaries`' `foreign` hook) is in a file
spelling a word of each group; that file's model is built without a project of its own (one file away), so its own
text alone decides what the helper does. `lineage_in_the_scan(shape, qualified)`: the class of the scan the name
resolves to, with its ancestors.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

if TYPE_CHECKING:
    from stabfix.project import ProjectIndex, ProjectView
    from stabfix.shape import Shape

T = TypeVar("T")
Root = tuple[str, tuple[str, ...]]  # an import's qualified name, and the attributes after it
_MAX_ALIAS_ROUNDS = 10  # `Names.qualify` gives up past 8 levels of attributes and aliases
_CALLABLE_KINDS = ("def", "method")  # what `Summaries.foreign_function` summarises

# each file's answer for each word set asked, kept while its text is the one the index holds
_SPELLS: dict[tuple[str, tuple[frozenset[str], ...]], tuple[str, bool]] = {}


def qualified_names(shape: "Shape", expr: ast.AST) -> set[str]:
    """Every name `Names.qualify` may give `expr` (a name or a name with attributes; nothing for anything else)."""
    return {_joined(root) for root in _roots_of(_name_roots(shape), expr)}


def imported_names(shape: "Shape", expr: ast.AST) -> set[str]:
    """Every name `ImportTracker.qualify` (`Checker.qualified_name`) may give `expr`: through imports only."""
    return {_joined(root) for root in _roots_of(_import_roots(shape), expr)}


def surely_qualified(shape: "Shape", expr: ast.AST) -> Optional[str]:
    """The name `Names.qualify` gives `expr` wherever it is read, when the file leaves no doubt: its root name is bound
    by imports alone, all naming one module or name, and nothing else in the file binds it (no assignment,
    parameter, loop target, `def`); None when unsure."""
    chain = _chain(expr)
    if chain is None or len(chain[1]) > 6:  # `Names.qualify` stops 8 levels down
        return None
    imported = _import_roots(shape).get(chain[0], ())
    if len(imported) != 1 or chain[0] in _aliases(shape) or chain[0] in _rebound_names(shape):
        return None
    return _joined(next(iter(_roots_of(_import_roots(shape), expr))))


def callees_spell(shape: "Shape", *groups: frozenset[str], kinds: tuple[str, ...] = ("def", "method"),
                  imports_only: bool = False) -> bool:
    """Whether a definition of one of `kinds` in another file of the scan that a call of this file may run is in a
    file spelling a word of each of `groups`. The callee is named as `Summaries`' `foreign` hook names it
    (`Names.qualify`), or with `imports_only` as `ImportTracker.qualify` does (`Checker.qualified_name`); the
    defaults are what `Summaries.foreign_function` summarises. False for a file analysed alone."""
    view = shape.project
    return view is not None and _recorded(view, lambda: _any_callee_spells(shape, view, groups, kinds, imports_only))


def lineage_in_the_scan(shape: "Shape", qualified: str) -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
    """The class `qualified` (as this file's imports spell it) names in the scan and its ancestors, each with its own
    methods (None for a class outside the scan), as `ProjectView.lineage` gives them; () for anything else, and for
    a file analysed alone."""
    view = shape.project
    if view is None:
        return ()
    known = shape.__dict__.setdefault("_lineages", {})  # asked again for every base and element naming it
    if qualified not in known:
        known[qualified] = _recorded(view, lambda: _lineage(view, qualified))
    return known[qualified]


def _lineage(view: "ProjectView", qualified: str) -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
    index = view.index
    symbol = index.resolve(qualified, view.path) if _may_be_in_tree(index, qualified, view.path) else None
    return index.lineage(symbol) if symbol is not None and symbol.kind == "class" else ()


def _recorded(view: "ProjectView", query: Callable[[], T]) -> T:
    with view.index.recording() as consulted:
        try:
            return query()
        finally:
            view.consulted.merge(consulted)


def _any_callee_spells(shape: "Shape", view: "ProjectView", groups: tuple[frozenset[str], ...], kinds: tuple[str, ...],
                       imports_only: bool) -> bool:
    index, path = view.index, view.path
    here = os.path.abspath(path)
    roots = _import_roots(shape) if imports_only else _name_roots(shape)
    in_tree: dict[str, bool] = {}
    callees = set()
    for call in shape.all_calls():
        for imported, tail in _roots_of(roots, call.func):  # type: ignore[attr-defined]
            if imported not in in_tree:
                in_tree[imported] = _may_be_in_tree(index, imported, path)
            if in_tree[imported]:
                callees.add(_joined((imported, tail)))
    for qualified in sorted(callees):
        symbol = index.resolve(qualified, path)
        if symbol is not None and symbol.kind in kinds and symbol.path != here and _file_spells(index, symbol.path, groups):
            return True
    return False


def _may_be_in_tree(index: "ProjectIndex", qualified: str, path: str) -> bool:
    """Whether a name starting with `qualified` can resolve to a file of the scan: a module of the tree is
    `qualified`, a prefix of it, or under it."""
    target = index.absolute(qualified, path)
    return bool(target) and (index.scanned_module_of(target, path) is not None  # type: ignore[arg-type]
                             or index.modules.holds_submodules(target, path))  # type: ignore[arg-type]


def _file_spells(index: "ProjectIndex", path: str, groups: tuple[frozenset[str], ...]) -> bool:
    from stabfix.text_gates import words_of

    text = index.text(path)  # recorded, also when the answer is kept
    if text is None:
        return False
    kept = _SPELLS.get((path, groups))
    if kept is not None and kept[0] is text:
        return kept[1]
    words = words_of(text)
    answer = all(not group.isdisjoint(words) for group in groups)
    _SPELLS[(path, groups)] = (text, answer)
    return answer


def _roots_of(roots: dict[str, set[Root]], expr: ast.AST) -> set[Root]:
    chain = _chain(expr)
    if chain is None or chain[0] not in roots:
        return set()
    return {(imported, (*tail, *chain[1])) for imported, tail in roots[chain[0]]}


def _joined(root: Root) -> str:
    return ".".join((root[0], *root[1]))


def _import_roots(shape: "Shape") -> dict[str, set[Root]]:
    found = shape.__dict__.get("_import_roots")
    if found is None:
        found = {}
        for local, qualified in _imports(shape):
            found.setdefault(local, set()).add((qualified, ()))
        shape.__dict__["_import_roots"] = found
    return found


def _name_roots(shape: "Shape") -> dict[str, set[Root]]:
    """name -> what it may stand for through the imports and plain aliases (`sync = comm.sync_all`) of the file."""
    found = shape.__dict__.get("_name_roots")
    if found is not None:
        return found
    found = {name: set(roots) for name, roots in _import_roots(shape).items()}
    aliases = _aliases(shape)
    for _ in range(_MAX_ALIAS_ROUNDS):
        grown = False
        for name, chains in aliases.items():
            roots = found.setdefault(name, set())
            before = len(roots)
            for root, tail in chains:
                roots.update((imported, (*above, *tail)) for imported, above in found.get(root, ()))
            grown |= len(roots) != before
        if not grown:
            break
    shape.__dict__["_name_roots"] = found
    return found


def _rebound_names(shape: "Shape") -> frozenset[str]:
    """The names something other than an import binds somewhere in the file (stores, deletions, parameters, `def`,
    `class`, `except ... as`, match captures)."""
    found = shape.__dict__.get("_rebound_names")
    if found is None:
        names = {node.id for node in shape.nodes(ast.Name) if type(node.ctx) is not ast.Load}  # type: ignore[attr-defined]
        names.update(node.arg for node in shape.nodes(ast.arg))  # type: ignore[attr-defined]
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            names.update(node.name for node in shape.nodes(kind) if node.name)  # type: ignore[attr-defined]
        found = shape.__dict__["_rebound_names"] = frozenset(names)
    return found


def _imports(shape: "Shape") -> list[tuple[str, str]]:
    """(local name, what it stands for) for every name an import of the file binds, as
    `stabfix.model.source.imports.imported_names` spells it (`from . import x` gives `..x` there; the
    package's own `.x` is added too, so the gates stay supersets whichever way that reads)."""
    found = []
    for node in shape.nodes(ast.Import):
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.asname:
                found.append((alias.asname, alias.name))
            else:
                top = alias.name.split(".", 1)[0]
                found.append((top, top))
    for node in shape.nodes(ast.ImportFrom):
        prefix = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            found.append((local, f"{prefix}.{alias.name}" if prefix else alias.name))
            if prefix and not node.module:  # type: ignore[attr-defined]
                found.append((local, prefix + alias.name))
    return found


def _aliases(shape: "Shape") -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """name -> the name chains (`root`, attributes) plain assignments bind it to, any scope."""
    found: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for node in shape.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        chain = _chain(value) if value is not None else None
        if chain is None:
            continue
        targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
        for target in targets:
            if type(target) is ast.Name:
                found.setdefault(target.id, []).append(chain)
    return found


def _chain(expr: ast.AST) -> Optional[tuple[str, tuple[str, ...]]]:
    """`a.b.c` -> ("a", ("b", "c")); None for anything not a name with attributes."""
    tail: list[str] = []
    while type(expr) is ast.Attribute:
        tail.append(expr.attr)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is not ast.Name:
        return None
    return expr.id, tuple(reversed(tail))  # type: ignore[attr-defined]
