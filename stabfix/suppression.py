"""`# noqa: SF101` and `# stabfix: ignore[SF101]` comments (codes or names; bare forms suppress all)."""

from __future__ import annotations

import io
import re
import tokenize

ALL = "*"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-]+(?:[\s,]+[A-Za-z0-9_\-]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*stabfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)


def suppressions_by_line(text: str) -> dict[int, set[str]]:
    """Line number -> suppressed codes/names (or ALL), read from real comments only."""
    result: dict[int, set[str]] = {}
    for line, comment in _comments(text):
        for pattern in (_NOQA, _IGNORE):
            for match in pattern.finditer(comment):
                codes = match.group("codes")
                entries = {ALL} if not codes else {c for c in re.split(r"[\s,]+", codes.strip()) if c}
                result.setdefault(line, set()).update(entries)
    return result


def _comments(text: str):
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # libcst accepted the file, tokenize did not: fall back to a line scan.
        for number, line in enumerate(text.splitlines(), start=1):
            if "#" in line:
                yield number, line[line.index("#") :]


def is_suppressed(entries: set[str] | None, code: str, name: str) -> bool:
    if not entries:
        return False
    return ALL in entries or code in entries or name in entries
