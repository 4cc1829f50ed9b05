"""`# noqa: SF101` and `# stabfix: ignore[SF101]` comments (codes or names; bare forms suppress all).

A comment suppresses the findings reported on its own line or on a statement whose first line it
is on. A line that cannot carry a comment (it ends inside a multi-line string, or with a backslash
continuation) is covered by a comment on the first line after it that can: that is also where
`--add-noqa` writes. This module also tells which directives suppressed something (for the
`unused-suppression` rule), rewrites a comment without some of its codes, and adds directives.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

ALL = "*"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-]+(?:[\s,]+[A-Za-z0-9_\-]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*stabfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_SPLIT = re.compile(r"[\s,]+")
_ENTRY = re.compile(r"^(?:[A-Z]+[0-9]+|[a-z]+(?:-[a-z0-9]+)+)$")  # a code (SF101, E501) or a rule name
_MULTILINE_SKIP = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}


def directive_entries(comment: str) -> set[str]:
    """The codes/names one comment suppresses, or {ALL} for a bare `# noqa` / `# stabfix: ignore`."""
    entries: set[str] = set()
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(comment):
            codes = match.group("codes")
            entries.update({ALL} if not codes else {c for c in _SPLIT.split(codes.strip()) if c})
    return entries


@dataclass
class Suppressions:
    """The suppression comments of one file, by line."""

    by_line: dict[int, set[str]] = field(default_factory=dict)
    comments: dict[int, tuple[int, str]] = field(default_factory=dict)  # line -> (column, comment text)
    blocked: set[int] = field(default_factory=set)  # lines that cannot end with a comment
    line_count: int = 0

    @classmethod
    def of(cls, text: str) -> "Suppressions":
        result = cls(line_count=text.count("\n") + 1)
        lines = io.StringIO(text).readlines()
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT:
                    result._add_comment(token.start[0], token.start[1], token.string)
                elif token.end[0] > token.start[0] and token.type not in _MULTILINE_SKIP:
                    result.blocked.update(range(token.start[0], token.end[0]))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            # libcst accepted the file, tokenize did not: fall back to a line scan.
            result = cls(line_count=result.line_count)
            for number, line in enumerate(lines, start=1):
                if "#" in line:
                    column = line.index("#")
                    result._add_comment(number, column, line[column:].rstrip("\r\n"))
        for number, line in enumerate(lines, start=1):
            if line.rstrip("\r\n").endswith("\\") and number not in result.comments:
                result.blocked.add(number)
        return result

    def _add_comment(self, line: int, column: int, comment: str) -> None:
        self.comments[line] = (column, comment)
        entries = directive_entries(comment)
        if entries:
            self.by_line.setdefault(line, set()).update(entries)

    def comment_line(self, line: int) -> int:
        """The line whose comment covers `line`: itself, or the first commentable line after it."""
        while line in self.blocked and line < self.line_count:
            line += 1
        return line

    def matching(self, line: int, code: str, name: str) -> set[tuple[int, str]]:
        """(comment line, entry) pairs that suppress `code` at `line`; empty when it is not suppressed."""
        target = self.comment_line(line)
        entries = self.by_line.get(target) or set()
        return {(target, entry) for entry in entries if entry in (ALL, code, name)}


def suppressions_by_line(text: str) -> dict[int, set[str]]:
    """Line number -> suppressed codes/names (or ALL), read from real comments only."""
    return Suppressions.of(text).by_line


def is_suppressed(entries: set[str] | None, code: str, name: str) -> bool:
    if not entries:
        return False
    return ALL in entries or code in entries or name in entries


def remove_entries(comment: str, unused: set[str]) -> str:
    """The comment without the directive entries in `unused`; a directive left with no entry goes,
    and so does the comment if nothing else is left in it ("" then)."""

    def rewrite(match: re.Match) -> str:
        codes = match.group("codes")
        if not codes:
            return match.group(0)
        kept = [c for c in _SPLIT.split(codes.strip()) if c and c not in unused]
        if not kept:
            return ""
        if not any(_ENTRY.match(c) for c in kept):
            # `# noqa: SF101 because ...`: the words after the codes were never codes; keep them as text
            return "# " + " ".join(kept)
        separator = ", " if "," in codes else " "
        start, end = match.span("codes")
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + separator.join(kept) + whole[end - offset :]

    text = comment
    for pattern in (_NOQA, _IGNORE):
        text = pattern.sub(rewrite, text)
    text = text.strip()
    return "" if text in ("", "#") else text


def add_noqa(text: str, codes_by_line: dict[int, set[str]], names: dict[str, str]) -> tuple[str, int]:
    """Write `# noqa: CODE` for each finding line (merged into an existing directive of the line).

    `codes_by_line` maps a finding's line to its codes, `names` a code to its rule name (a directive
    naming the rule already covers it). Returns the new text and how many codes were added.
    """
    suppressions = Suppressions.of(text)
    wanted: dict[int, set[str]] = {}
    for line, codes in codes_by_line.items():
        target = suppressions.comment_line(line)
        present = suppressions.by_line.get(target, set())
        missing = {code for code in codes if not is_suppressed(present, code, names.get(code, code))}
        if missing:
            wanted.setdefault(target, set()).update(missing)
    if not wanted:
        return text, 0
    lines = io.StringIO(text).readlines()
    added = 0
    for number, codes in sorted(wanted.items()):
        if not 1 <= number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        new_codes = sorted(codes)
        if number in suppressions.comments:
            column, comment = suppressions.comments[number]
            merged = _merge_into(comment, new_codes)
            body = body[:column] + merged + body[column + len(comment) :]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(new_codes)
        lines[number - 1] = body + ending
        added += len(new_codes)
    return "".join(lines), added


def _merge_into(comment: str, codes: list[str]) -> str:
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(comment):
            if match.group("codes"):
                existing = match.group("codes")
                separator = ", " if "," in existing or " " not in existing else " "
                end = match.end("codes")
                return comment[:end] + separator + separator.join(codes) + comment[end:]
    return comment.rstrip() + "  # noqa: " + ", ".join(codes)
