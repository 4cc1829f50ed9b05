"""Which of CPython's statements a libcst statement is, found by their places in the two trees (the n-th
statement of the same block), so that CPython's line of it anchors a codegen of that statement alone.

libcst groups `a = 1; b = 2` into one `SimpleStatementLine` (CPython: two statements, the first anchors
it), writes `elif` as an `If` in `If.orelse` (CPython: `orelse=[If]`) and an `else:` as an `Else` node
holding the block (CPython: the block itself). Anything else is not mapped (None): the caller then
generates the file from its top.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

# libcst's compound statements and the CPython statements each may be
_COMPOUND = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.Match: (ast.Match,),
}
if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
    _COMPOUND[cst.TryStar] = (ast.TryStar,)
COMPOUND_TYPES = frozenset(_COMPOUND)
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite)
# libcst's small statements whose CPython statement has the same class name
_SMALL_NAMES = {
    cst.Expr: "Expr", cst.Assign: "Assign", cst.AnnAssign: "AnnAssign", cst.AugAssign: "AugAssign",
    cst.Return: "Return", cst.Pass: "Pass", cst.Break: "Break", cst.Continue: "Continue", cst.Raise: "Raise",
    cst.Assert: "Assert", cst.Del: "Delete", cst.Import: "Import", cst.ImportFrom: "ImportFrom",
    cst.Global: "Global", cst.Nonlocal: "Nonlocal",
}


class StatementLines:
    """CPython's statement for a libcst statement that starts a line (a `SimpleStatementLine` or a compound
    statement, in a block or the module), through `parents` (id(node) -> parent, the traversal's)."""

    def __init__(self, module: cst.Module, tree: ast.Module, parents: dict[int, cst.CSTNode]) -> None:
        self.module, self.tree, self.parents = module, tree, parents
        self._indexes: dict[int, dict[int, int]] = {}  # id(body holder) -> id(statement) -> CPython index
        # id(statement) -> its CPython statement (None: not mapped): every statement placed asks for the
        # compound statements around it again
        self._statements: dict[int, Optional[ast.stmt]] = {}

    def statement(self, node: cst.CSTNode) -> Optional[ast.stmt]:
        key = id(node)
        if key in self._statements:
            return self._statements[key]
        found = self._statements[key] = self._statement(node)
        return found

    def _statement(self, node: cst.CSTNode) -> Optional[ast.stmt]:
        found = self._mapped(node)
        if found is None:
            return None
        kinds = _COMPOUND.get(type(node))
        if kinds is not None:
            return found if isinstance(found, kinds) else None
        if type(node) is not cst.SimpleStatementLine or not node.body:
            return None
        return found if type(found).__name__ == _SMALL_NAMES.get(type(node.body[0])) else None

    def _mapped(self, node: cst.CSTNode) -> Optional[ast.stmt]:
        holder = self.parents.get(id(node))
        if holder is None:
            return None
        if holder is self.module:
            statements: Optional[list] = self.tree.body
        elif type(holder) in _BLOCKS:
            statements = self._block(holder)
        else:
            return None
        index = self._index(holder).get(id(node))
        if statements is None or index is None or index >= len(statements):
            return None
        return statements[index]

    def _index(self, holder: cst.CSTNode) -> dict[int, int]:
        index = self._indexes.get(id(holder))
        if index is None:
            index, count = {}, 0
            for statement in holder.body:
                index[id(statement)] = count
                count += len(statement.body) if type(statement) is cst.SimpleStatementLine else 1
            self._indexes[id(holder)] = index
        return index

    def _block(self, block: cst.CSTNode) -> Optional[list]:
        """CPython's statements of a libcst block."""
        owner = self.parents.get(id(block))
        kind = type(owner)
        if kind in _COMPOUND:
            found = self._compound(owner)
            return found.body if found is not None and getattr(owner, "body", None) is block else None
        holder = self.parents.get(id(owner))
        found = self._compound(holder) if type(holder) in _COMPOUND else None
        if found is None:
            return None
        if kind is cst.Else:
            return found.orelse if getattr(holder, "orelse", None) is owner else None
        if kind is cst.Finally:
            return found.finalbody if getattr(holder, "finalbody", None) is owner else None
        if kind is cst.MatchCase:
            return _nth_body(holder.cases, found.cases, owner)
        if kind is cst.ExceptHandler or kind.__name__ == "ExceptStarHandler":
            return _nth_body(holder.handlers, found.handlers, owner)
        return None

    def _compound(self, node: cst.CSTNode) -> Optional[ast.stmt]:
        """CPython's statement of a compound statement; an `elif` is its `If`'s `orelse[0]`."""
        holder = self.parents.get(id(node))
        if type(node) is cst.If and type(holder) is cst.If and holder.orelse is node:
            outer = self._compound(holder)
            inner = outer.orelse[0] if outer is not None and len(outer.orelse) == 1 else None
            return inner if isinstance(inner, ast.If) else None
        return self.statement(node)


def _nth_body(nodes, statements, node) -> Optional[list]:
    for position, candidate in enumerate(nodes):
        if candidate is node:
            return statements[position].body if position < len(statements) else None
    return None
