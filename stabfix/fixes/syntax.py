"""Small syntax helpers the fix builders share."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names, Scope
from stabfix.model.source.syntax import node_code


def code_for(node: cst.CSTNode) -> str:
    """The source text of a node, as the user wrote it."""
    return node_code(node)


# Fixes spell the same few snippets again and again (`torch.no_grad()` for every eval loop of a file, the
# same statement inserted before every step): each text is parsed once and its tree shared. That is safe
# because libcst trees are immutable and a fix only places a snippet in the trees it builds (never as a
# node it replaces, never compared by identity); a tree a fix needs to tell apart must be parsed with
# `cst.parse_*` itself. Bounded, and keyed by text alone: no file's facts live here.
@lru_cache(maxsize=512)
def parsed_expression(code: str) -> cst.BaseExpression:
    """`cst.parse_expression(code)`, shared (see above)."""
    return cst.parse_expression(code)


@lru_cache(maxsize=512)
def parsed_statement(code: str) -> cst.BaseStatement:
    """`cst.parse_statement(code)`, shared (see above)."""
    return cst.parse_statement(code)


def block_body(block: cst.CSTNode) -> tuple:
    """The statements of a Module or IndentedBlock."""
    return tuple(getattr(block, "body", ()))


def starts_statement(line: cst.SimpleStatementLine, call: cst.Call) -> bool:
    """Whether `call` is what the line does (`opt.step()`, `x = opt.step()`): code inserted before the
    line then runs right before the call."""
    first = line.body[0]
    if type(first) in (cst.Expr, cst.Assign, cst.AnnAssign):
        return first.value is call
    return False


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`... whichever is free; the name is then taken."""
    name, index = base, 1
    while name in taken:
        name, index = f"{base}_{index}", index + 1
    taken.add(name)
    return name


def names_taken(names: Names, scope_node: cst.CSTNode) -> set[str]:
    """Every variable name read or bound in a scope or the scopes nested in it: a new variable there
    must differ from all of them."""
    scope = names.scope_of(scope_node)
    return {node.value for node, use in names.uses.items() if scope is not None and _within(use.scope, scope)}


def names_local_to(names: Names, scope_node: cst.CSTNode, span: tuple[int, int]) -> set[str]:
    """The variables that occur in `span` (a range of the names model's order, such as a loop's) and
    nowhere else in the scope or the scopes nested in it."""
    scope = names.scope_of(scope_node)
    inside: set[str] = set()
    outside: set[str] = set()
    for node, use in names.uses.items():
        if scope is not None and _within(use.scope, scope):
            (inside if span[0] <= use.order <= span[1] else outside).add(node.value)
    return inside - outside


def _within(scope: Optional[Scope], outer: Scope) -> bool:
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False


def with_chain_root(expr: cst.BaseExpression, old: cst.CSTNode, new: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` with the node `old` at the root of its chain of method calls, attributes and subscripts replaced by
    `new`: `torch.arange(n).unsqueeze(0)` with `torch.arange(n, device=d)` at its root."""
    if expr is old:
        return new
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        return expr.with_changes(func=expr.func.with_changes(value=with_chain_root(expr.func.value, old, new)))
    if type(expr) in (cst.Attribute, cst.Subscript):
        return expr.with_changes(value=with_chain_root(expr.value, old, new))
    if type(expr) is cst.Call and expr.args and expr.args[0].keyword is None and not expr.args[0].star:
        first = expr.args[0]  # a wrapper that holds its argument as it is (`Variable(torch.zeros(n))`)
        return expr.with_changes(args=[first.with_changes(value=with_chain_root(first.value, old, new)), *expr.args[1:]])
    return expr
