"""CPython's tree of a file, indexed for the rules' structural gates.

A rule's text gates (`Checker.tokens`, `words`, `pattern`) let a file by when it spells what the rule needs.
Its structural gate (`Checker.shape_allows`) then asks CPython's tree of the file (`ast`: a fraction of a libcst
parse, and parsed anyway to see whether the file nests too deeply to analyse) whether a shape the rule reports on
is there at all: a statement that is only a call, a class with a base that keeps a list in `self`, a call inside
a loop. Only the file's own code decides (what another file defines is never seen here), so a gate asks for the
place the rule would report on, never for a fact that could come from elsewhere.

A gate is a speed filter: it must answer True for every file the rule can report on (a wrong False loses
findings silently; tests/test_shape_gates.py runs every bad example and red-team case through it), and may
answer True for many files it cannot. The index is built on the first question, in one walk of the tree.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Iterator, Optional

from stabfix.text_gates import words_of

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def callee_name(call: ast.Call) -> Optional[str]:
    """The last name of what a call calls: `x.to(d)` -> "to", `f(x)` -> "f", `g()(x)` -> None."""
    func = call.func
    if type(func) is ast.Attribute:
        return func.attr
    if type(func) is ast.Name:
        return func.id
    return None


class _Index:
    __slots__ = ("parents", "by_type", "calls")

    def __init__(self, tree: ast.AST) -> None:
        parents: dict[int, ast.AST] = {}
        by_type: dict[type, list[ast.AST]] = {}
        calls: dict[Optional[str], list[ast.Call]] = {}
        children = ast.iter_child_nodes
        stack = [tree]
        # Explicit stack, not recursion: a file CPython parsed may nest deeper than Python's recursion limit.
        while stack:
            node = stack.pop()
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [node]
            else:
                found.append(node)
            if kind is ast.Call:
                calls.setdefault(callee_name(node), []).append(node)  # type: ignore[arg-type]
            for child in children(node):
                parents[id(child)] = node
                stack.append(child)
        self.parents = parents
        self.by_type = by_type
        self.calls = calls


class Shape:
    """A file's CPython tree with the lookups structural gates ask."""

    def __init__(self, tree: ast.Module, text: str = "") -> None:
        self.tree = tree
        self.text = text

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word of the file's text (identifiers, keywords, words in strings and comments)."""
        return words_of(self.text)

    @cached_property
    def _index(self) -> _Index:
        return _Index(self.tree)

    def nodes(self, *types: type) -> list[ast.AST]:
        """Every node of these types (in no particular order: a gate answers yes or no)."""
        by_type = self._index.by_type
        if len(types) == 1:
            return by_type.get(types[0], [])
        return [node for kind in types for node in by_type.get(kind, [])]

    def calls(self, *names: str) -> list[ast.Call]:
        """Every call whose callee's last name is one of `names` (`x.to(d)` and `to(x)` for "to")."""
        calls = self._index.calls
        return [call for name in names for call in calls.get(name, [])]

    def all_calls(self) -> list[ast.Call]:
        return self.nodes(ast.Call)  # type: ignore[return-value]

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self._index.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        parents = self._index.parents
        parent = parents.get(id(node))
        while parent is not None:
            yield parent
            parent = parents.get(id(parent))

    def enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        """The innermost `def`/`async def`/`lambda` around the node, None at module or class level."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, FUNCTIONS):
                return ancestor
        return None

    def enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        """The innermost class around the node (through its methods), None outside every class."""
        for ancestor in self.ancestors(node):
            if type(ancestor) is ast.ClassDef:
                return ancestor  # type: ignore[return-value]
        return None

    def in_loop(self, node: ast.AST) -> bool:
        """Whether a loop (or comprehension) of the node's own function (or of the module) runs it repeatedly."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, LOOPS):
                return True
            if isinstance(ancestor, FUNCTIONS):
                return False
        return False
