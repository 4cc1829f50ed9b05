"""Codemods that add, move or drop whole statement lines (event-order fixes: SF303, SF404-SF406).

- `insert_before(line, code)` / `insert_after(line, code)`: a new line next to `line`, in its block;
  inserted before, it takes over the comments above `line`, so they stay next to the code they describe.
- `move_before(moved, anchor)`: `moved` comes out of its place and goes right before `anchor`.
Each returns the `changes` of a `Fix` (node -> replacement), or None when a line is not a plain one.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.findings import Replacement
from stabfix.fixes.syntax import parsed_statement

Changes = dict[cst.CSTNode, Replacement]


def insert_before(line: cst.SimpleStatementLine, *codes: str) -> Changes:
    new = [parsed_statement(code + "\n") for code in codes]
    new[0] = new[0].with_changes(leading_lines=line.leading_lines)
    return {line: cst.FlattenSentinel([*new, line.with_changes(leading_lines=())])}


def insert_after(line: cst.SimpleStatementLine, *codes: str) -> Changes:
    return {line: cst.FlattenSentinel([line, *(parsed_statement(code + "\n") for code in codes)])}


def move_before(moved: cst.SimpleStatementLine, anchor: cst.SimpleStatementLine, *extra: str) -> Optional[Changes]:
    """Move `moved` (with the comment lines above it, and any lines in `extra` put ahead of it) right
    before `anchor`."""
    if moved is anchor:
        return None
    new = [parsed_statement(code + "\n") for code in extra]
    new.append(moved)  # with the comment lines above it
    new[0] = new[0].with_changes(leading_lines=(*anchor.leading_lines, *new[0].leading_lines))
    return {
        moved: cst.RemovalSentinel.REMOVE,
        anchor: cst.FlattenSentinel([*new, anchor.with_changes(leading_lines=())]),
    }

