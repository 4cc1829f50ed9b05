"""Where a statement sits: the recorded chain of statements and blocks around a site.

The `steps` part records, for the node being visited, its `Place`: the Module, then each enclosing
statement with the block it sits in (IndentedBlock, SimpleStatementSuite, Else, ExceptHandler...),
outermost first. A checker snapshots it at a site (`steps.place()`) and answers "which statement,
which block, which `if` owns it" from the snapshot, without a parent map or a second walk.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from stabfix.model.source.syntax import node_kinds

Place = tuple[cst.CSTNode, ...]
Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Else)
# exact types: a place's blocks would each miss an ABC isinstance, and rules ask per site
_STATEMENTS = node_kinds(cst.SimpleStatementLine, cst.BaseCompoundStatement)


def enclosing_statement(place: Place) -> Optional[cst.CSTNode]:
    """The innermost statement (a line or a compound statement) of the place."""
    for node in reversed(place):
        if type(node) in _STATEMENTS:
            return node
    return None


def parent_in(place: Place, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The node right around `node` in the place (its block, or the `if` of an `elif`)."""
    index = index_in(place, node)
    return place[index - 1] if index is not None and index > 0 else None


def index_in(place: Place, node: cst.CSTNode) -> Optional[int]:
    return next((i for i in range(len(place) - 1, -1, -1) if place[i] is node), None)


def owning_if(place: Place, statement: cst.CSTNode) -> Optional[cst.If]:
    """The `if` whose body (or `else`/`elif`) directly holds the statement."""
    index = index_in(place, statement)
    if index is None:
        return None
    index -= 1
    while index >= 0 and isinstance(place[index], _BLOCKS):
        index -= 1
    return place[index] if index >= 0 and type(place[index]) is cst.If else None  # type: ignore[return-value]


def called_as_statement(place: Place, call: cst.Call) -> Optional[cst.CSTNode]:
    """The line or one-line suite whose statement is the call alone (`torch.cuda.empty_cache()`), if so."""
    container = place[-1] if place else None
    if type(container) in (cst.SimpleStatementLine, cst.SimpleStatementSuite) and any(
        type(small) is cst.Expr and small.value is call for small in container.body
    ):
        return container
    return None


def body_of(block: Optional[cst.CSTNode]) -> tuple:
    """The statements of a Module or block (small statements of a line or suite); () for anything else."""
    body = getattr(block, "body", ())
    return tuple(body) if isinstance(body, (list, tuple)) else ()


def position_in(siblings: tuple, node: cst.CSTNode) -> Optional[int]:
    return next((i for i, item in enumerate(siblings) if item is node), None)
