"""The other files of the scan whose functions a file's calls may run, as structural gates ask it.

A rule that reports what a helper does (a summary's `collective` effect) sees into another file only where
`Summaries` hands a call's qualified name to the project (`Names.qualify`: an import, or a plain alias of a
name, then attributes: `comm.sync_all`, `pkg.comm.sync_all`) and the index resolves it to a def or method
there (through re-exports, any number of files). That file's model is built without a project of its own
(`stabfix.project.definitions`: one file away), so its own text alone decides what the helper does.

`callees_spell(shape, words)` asks whether such a file spells one of `words`. Every qualified name the model
could hand over is tried (a superset: every import and alias of a name in any scope, every call rooted in
one); the index's answers are recorded in the view's `consulted` for the cache, so a change in a file it
read (the helper's, a re-exporting `__init__.py`) or a module lookup it made rescans this file.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Iterable, Optional

if TYPE_CHECKING:
    from stabfix.project import ProjectIndex
    from stabfix.shape import Shape

_MAX_ALIAS_ROUNDS = 10  # `Names.qualify` gives up past 8 levels of attributes and aliases
_SYMBOL_KINDS = ("def", "method")  # what `Summaries.foreign_function` summarises

# each file's answer for each word set asked, kept while its text is the one the index holds
_SPELLS: dict[tuple[str, frozenset[str]], tuple[str, bool]] = {}


def callees_spell(shape: "Shape", words: frozenset[str]) -> bool:
    """Whether a def or method of another file of the scan that a call of this file may run (see the module
    docstring) is in a file spelling one of `words`. False for a file analysed alone."""
    view = shape.project
    if view is None:
        return False
    index = view.index
    with index.recording() as consulted:
        try:
            return _any_callee_spells(shape, index, view.path, words)
        finally:
            view.consulted.merge(consulted)


def _any_callee_spells(shape: "Shape", index: "ProjectIndex", path: str, words: frozenset[str]) -> bool:
    here = os.path.abspath(path)
    for qualified in sorted(_qualified_callees(shape, lambda name: _may_be_in_tree(index, name, path))):
        symbol = index.resolve(qualified, path)
        if symbol is not None and symbol.kind in _SYMBOL_KINDS and symbol.path != here \
                and _file_spells(index, symbol.path, words):
            return True
    return False


def _may_be_in_tree(index: "ProjectIndex", imported: str, path: str) -> bool:
    """Whether a name resolved from `imported` (`imported.<anything>`) can be a file of the scan: a module of the
    tree is `imported`, a prefix of it, or under it."""
    target = index.absolute(imported, path)
    return bool(target) and (index.scanned_module_of(target, path) is not None  # type: ignore[arg-type]
                             or index.modules.holds_submodules(target, path))  # type: ignore[arg-type]


def _file_spells(index: "ProjectIndex", path: str, words: frozenset[str]) -> bool:
    from stabfix.text_gates import words_of

    text = index.text(path)  # recorded, also when the answer is kept
    if text is None:
        return False
    kept = _SPELLS.get((path, words))
    if kept is not None and kept[0] is text:
        return kept[1]
    answer = not words.isdisjoint(words_of(text))
    _SPELLS[(path, words)] = (text, answer)
    return answer


def _qualified_callees(shape: "Shape", in_tree) -> set[str]:
    """Every qualified name `Names.qualify` may give the callee of a call of the file, from the imports `in_tree`
    accepts (what the import binds is asked once each)."""
    imported: dict[str, set[str]] = {}
    for local, qualified in _imported_names(shape):
        imported.setdefault(local, set()).add(qualified)
    kept = {name: {q for q in found if in_tree(q)} for name, found in imported.items()}
    names = {name: found for name, found in kept.items() if found}
    aliases = _aliases(shape)
    for _ in range(_MAX_ALIAS_ROUNDS):
        grown = False
        for name, chains in aliases.items():
            found = names.setdefault(name, set())
            before = len(found)
            for root, tail in chains:
                found.update(_joined(names.get(root, ()), tail))
            grown |= len(found) != before
        if not grown:
            break
    callees: set[str] = set()
    for call in shape.all_calls():
        chain = _chain(call.func)  # type: ignore[attr-defined]
        if chain is not None and chain[0] in names:
            callees.update(_joined(names[chain[0]], chain[1]))
    return callees


def _joined(prefixes: Iterable[str], tail: tuple[str, ...]) -> set[str]:
    return {".".join((prefix, *tail)) for prefix in prefixes} if tail else set(prefixes)


def _imported_names(shape: "Shape") -> list[tuple[str, str]]:
    """(local name, what it stands for) for every name an import of the file binds, as
    `stabfix.model.source.imports.imported_names` spells it (`from . import x` gives `..x` there; the
    package's own `.x` is added too, so the gate stays a superset whichever way that reads)."""
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
    """name -> the name chains (`root`, attributes) plain assignments bind it to (`sync = comm.sync_all`), any scope."""
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
