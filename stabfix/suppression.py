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
# A code (SF101, E501) or a rule name (kebab-case), standing alone: `SF101abc` and `old` are words.
_ENTRY_PATTERN = r"(?:[A-Z]+[0-9]+|[a-z]+(?:-[a-z0-9]+)+)(?![\w-])"
_ENTRY = re.compile(f"^{_ENTRY_PATTERN}$")
# `# noqa: A1, B2 free text`: the entries run as long as each word is a code or rule name, separated
# by commas and/or spaces; what follows (trailing commas dropped with the directive) is free text.
_NOQA = re.compile(
    rf"(?i:#\s*noqa)(?![\w-])(?P<colon>\s*:\s*(?:(?P<codes>{_ENTRY_PATTERN}(?:(?:\s*,\s*|\s+){_ENTRY_PATTERN})*)(?:\s*,)*)?)?"
)
# `# stabfix: ignore[A1, B2] free text`; an unclosed bracket is no directive (not a bare one).
_IGNORE = re.compile(r"#\s*stabfix:\s*ignore(?:\[(?P<codes>[^\]]*)\]|(?![\[\w-]))", re.I)
_SPLIT = re.compile(r"[\s,]+")
_MAY_HOLD_DIRECTIVE = re.compile(r"noqa|stabfix", re.I)
_MULTILINE_SKIP = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}


@dataclass(frozen=True)
class _Directive:
    """One `noqa` / `stabfix: ignore` directive inside a comment, by its spans in the comment text."""

    start: int
    end: int
    codes: tuple[int, int] | None  # where its entry list is; None for a bare directive (suppresses all)
    bracketed: bool

    def entries(self, comment: str) -> list[str]:
        if self.codes is None:
            return []
        return [entry for entry in _SPLIT.split(comment[self.codes[0] : self.codes[1]]) if entry]


def _directives(comment: str) -> list[_Directive]:
    """The directives of a comment, in order. `# noqa:` followed by words that are no codes is no
    directive (it suppresses nothing); `# noqa:` with nothing after it is a bare one, as in flake8."""
    found: list[_Directive] = []
    for match in _NOQA.finditer(comment):
        if match.group("codes"):
            found.append(_Directive(match.start(), match.end(), match.span("codes"), False))
        elif match.group("colon") is None or not comment[match.end() :].strip():
            found.append(_Directive(match.start(), match.end(), None, False))
    for match in _IGNORE.finditer(comment):
        codes = match.group("codes")
        span = match.span("codes") if codes is not None and codes.strip(" ,\t") else None
        found.append(_Directive(match.start(), match.end(), span, True))
    return sorted(found, key=lambda directive: directive.start)


def _may_hold_directive(text: str) -> bool:
    """`_MAY_HOLD_DIRECTIVE.search(text)`, found. A case-blind regex reads a big file a character at a time; in ASCII
    text, where no other character folds to these letters, the lowered text's substring search answers the same."""
    if text.isascii():
        lowered = text.lower()
        return "noqa" in lowered or "stabfix" in lowered
    return _MAY_HOLD_DIRECTIVE.search(text) is not None


def directive_entries(comment: str) -> set[str]:
    """The codes/names one comment suppresses, or {ALL} for a bare `# noqa` / `# stabfix: ignore`."""
    entries: set[str] = set()
    for directive in _directives(comment):
        entries.update(directive.entries(comment) or {ALL})
    return entries


@dataclass
class Suppressions:
    """The suppression comments of one file, by line."""

    by_line: dict[int, set[str]] = field(default_factory=dict)
    comments: dict[int, tuple[int, str]] = field(default_factory=dict)  # line -> (column, comment text)
    blocked: set[int] = field(default_factory=set)  # lines that cannot end with a comment
    line_count: int = 0

    @classmethod
    def directives_of(cls, text: str) -> "Suppressions":
        """What matching findings to directives needs (`by_line`): a text that spells neither `noqa` nor `stabfix`
        holds no directive, so it is not tokenized (its `comments` and `blocked` are left empty: `of` has them)."""
        if not _may_hold_directive(text):
            return cls(line_count=text.count("\n") + 1)
        return cls.of(text)

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
    and so does the comment if nothing else is in it ("" then). Free text is kept: `# noqa: SF101
    old reason` without SF101 is `# old reason`."""
    pieces: list[str] = []
    position = 0
    for directive in _directives(comment):
        entries = directive.entries(comment)
        kept = [entry for entry in entries if entry not in unused]
        if directive.codes is None or kept == entries or directive.start < position:
            continue
        pieces.append(comment[position : directive.start])
        if not kept:
            # the whole directive goes, and the `:` or `;` that tied it to the text after it
            after = re.match(r"\s*[:;]?", comment[directive.end :])
            position = directive.end + (after.end() if after else 0)
            continue
        elif directive.bracketed and not any(_ENTRY.match(entry) for entry in kept):
            # `ignore[SF101 because ...]`: the words left were never codes; keep them as text
            pieces.append(" " + " ".join(kept) + " ")
        else:
            start, end = directive.codes
            separator = ", " if "," in comment[start:end] else " "
            pieces.append(comment[directive.start : start] + separator.join(kept) + comment[end : directive.end])
        position = directive.end
    pieces.append(comment[position:])
    text = "".join(pieces).strip()
    if text.strip("# \t") == "":
        return ""
    return text if text.startswith("#") else "# " + text


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
    """The comment with `codes` added to its first directive that lists entries (free text after the
    list stays after it), or a `# noqa: ...` appended when it has none."""
    for directive in _directives(comment):
        if directive.codes is not None:
            start, end = directive.codes
            existing = comment[start:end]
            separator = ", " if "," in existing or " " not in existing.strip() else " "
            return comment[:end] + separator + separator.join(codes) + comment[end:]
    return comment.rstrip() + "  # noqa: " + ", ".join(codes)
