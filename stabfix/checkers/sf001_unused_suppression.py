"""SF001 unused-suppression: a `# noqa: SFxxx` / `# stabfix: ignore[...]` entry that suppresses nothing.

A meta rule: it collects the file's comments while the other rules visit, and once the engine has
matched their findings to the suppression directives (`stabfix.suppression`), it reports each
comment with entries naming a rule that ran on the file and suppressed none of its findings. Bare
directives and other tools' codes (`# noqa: E501`) are never reported. The safe fix drops the
unused entries, the directive when none is left, and the comment when nothing else is in it.
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.suppression import ALL, directive_entries, remove_entries

_Holder = cst.TrailingWhitespace | cst.EmptyLine
# A directive with explicit entries, one of which may be a stabfix code (SFnnn) or rule name (kebab-case).
_STABFIX_DIRECTIVE = re.compile(r"#\s*(?:noqa\s*:|stabfix:\s*ignore\[)[^\n#]*?(?:SF\d|\w-\w)", re.I)


class UnusedSuppressionChecker(Checker):
    code = "SF001"
    tokens = ("noqa", "NOQA", "NoQA", "Noqa", "stabfix:", "STABFIX:")
    meta = True

    @classmethod
    def may_fire(cls, text: str, project=None) -> bool:
        # `# noqa: E501` is everywhere in real code: only a directive that may name a stabfix rule
        # makes this rule parse the file.
        return super().may_fire(text, project) and _STABFIX_DIRECTIVE.search(text) is not None

    def __init__(self, context) -> None:
        super().__init__(context)
        self.holders: list[_Holder] = []

    def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
        if node.comment is not None and directive_entries(node.comment.value):
            self.holders.append(node)

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None and directive_entries(node.comment.value):
            self.holders.append(node)

    def audit(self, line_of: Callable[[cst.CSTNode], int], used: set[tuple[int, str]], ran: dict[str, str]) -> None:
        """Report the directive entries naming a rule in `ran` (code -> name) that no finding used."""
        names = set(ran.values())
        for holder in self.holders:
            comment = holder.comment
            line = line_of(comment)
            entries = directive_entries(comment.value) - {ALL}
            unused = sorted(e for e in entries if (e in ran or e in names) and (line, e) not in used)
            if unused:
                self.report(comment, _message(comment.value, unused), _removal(holder, set(unused)))


def _message(comment: str, unused: list[str]) -> str:
    shown = comment if len(comment) <= 60 else comment[:57] + "..."
    listed = ", ".join(unused)
    verb = "reports" if len(unused) == 1 else "report"
    return (
        f"`{shown}` suppresses nothing: {listed} {verb} nothing on this line; "
        f"remove {'it' if len(unused) == 1 else 'them'} from the comment."
    )


def _removal(holder: _Holder, unused: set[str]) -> Fix:
    rewritten = remove_entries(holder.comment.value, unused)
    if rewritten:
        replacement = holder.with_changes(comment=cst.Comment(rewritten))
    elif type(holder) is cst.EmptyLine:
        replacement = cst.RemovalSentinel.REMOVE
    else:
        replacement = holder.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    what = "the comment" if not rewritten else ", ".join(sorted(unused))
    return Fix("safe", f"remove {what}", {holder: replacement})
