"""A document's new text as LSP text edits: only the lines that changed, each run of changed lines one edit."""

from __future__ import annotations

import difflib

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from stabfix.server.positions import client_position, lsp_lines


def text_edits(codec: PositionCodec, old: str, new: str) -> list[types.TextEdit]:
    old_lines, new_lines = lsp_lines(old), lsp_lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    return [
        types.TextEdit(
            range=types.Range(_line_start(codec, old_lines, start), _line_start(codec, old_lines, end)),
            new_text="".join(new_lines[new_start:new_end]),
        )
        for tag, start, end, new_start, new_end in matcher.get_opcodes()
        if tag != "equal"
    ]


def _line_start(codec: PositionCodec, lines: list[str], index: int) -> types.Position:
    """The start of line `index`; past the last line, the end of the text (a last line without a line
    break has no line after it to start)."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return types.Position(line=index, character=0)
    return client_position(codec, lines, len(lines) - 1, len(lines[-1]))
