"""Code actions: each finding's fix as a quick fix (safe ones preferred, unsafe ones saying so) and one
source action that makes every safe fix, as `stabfix apply` does."""

from __future__ import annotations

from enum import Enum
from typing import Optional, Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from stabfix.server.analysis import Analyser, DocumentAnalysis
from stabfix.server.diagnostics import diagnostic
from stabfix.server.edits import text_edits

FIX_ALL_KIND = "source.fixAll.stabfix"
FIX_ALL_TITLE = "Fix all safe stabfix findings"


def wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Whether the client asked for actions of this kind: `only` lists kinds or their prefixes (`source`)."""
    if only is None:
        return True
    kind = _plain(kind)
    return any(kind == asked or kind.startswith(f"{asked}.") for asked in map(_plain, only))


def _plain(kind: str) -> str:
    # lsprotocol's kinds are str-valued enums, which Python 3.12 formats as `CodeActionKind.QuickFix`.
    return kind.value if isinstance(kind, Enum) else kind


def code_actions(
    analyser: Analyser,
    result: DocumentAnalysis,
    codec: PositionCodec,
    lines: list[str],
    document: types.OptionalVersionedTextDocumentIdentifier,
    requested: types.Range,
    only: Optional[Sequence[str]],
    versioned: bool = True,
) -> list[types.CodeAction]:
    """`versioned`: the client takes edits tied to a document version (`documentChanges`)."""
    actions = []
    if wanted(types.CodeActionKind.QuickFix, only):
        for item in result.findings:
            if item.fix is None:
                continue
            shown = diagnostic(codec, lines, item.finding)
            if not _overlaps(shown.range, requested):
                continue
            fixed = analyser.fix_one(result, item)
            if fixed is None or fixed == result.text:
                continue
            safe = item.fix.safety == "safe"
            title = f"Fix {item.finding.code}: {item.fix.description}"
            actions.append(
                types.CodeAction(
                    title=title if safe else f"{title} (unsafe)",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown],
                    is_preferred=safe,
                    edit=_workspace_edit(document, text_edits(codec, result.text, fixed), versioned),
                )
            )
    safe_fixes = any(item.fix is not None and item.fix.safety == "safe" for item in result.findings)
    if wanted(FIX_ALL_KIND, only) and safe_fixes:
        fixed = analyser.fix_all_safe(result)
        if fixed is not None and fixed != result.text:
            actions.append(
                types.CodeAction(
                    title=FIX_ALL_TITLE,
                    kind=FIX_ALL_KIND,
                    edit=_workspace_edit(document, text_edits(codec, result.text, fixed), versioned),
                )
            )
    return actions


def _workspace_edit(
    document: types.OptionalVersionedTextDocumentIdentifier, edits: list[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    if versioned:  # the client applies it only to the text the fix was computed from
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={document.uri: edits})


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)
