"""Positions as LSP counts them: lines end at `\\n`, `\\r\\n` or `\\r` only (str.splitlines also breaks
at form feeds and other separators Python source may hold), columns in the client's units."""

from __future__ import annotations

import re

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    """The lines of text, each with its line break."""
    return _LINE.findall(text)


def client_position(codec: PositionCodec, lines: list[str], line: int, column: int) -> types.Position:
    """Line and column counted from 0 in characters -> the client's units."""
    if line >= len(lines):
        return types.Position(line=line, character=0)
    return codec.position_to_client_units(lines, ServerTextPosition(line, min(column, len(lines[line]))))
