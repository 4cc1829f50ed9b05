"""No fix deletes a comment: every comment of the original survives `apply --unsafe-fixes`, for every fix
of every rule, on each bad example with a `fixed` in rules/*.yaml and on variants of it with comments put
above, inside and after each rewritten statement.

The one exception is SF001, whose fix removes a suppression directive on purpose; the free text next to the
directive must survive even there."""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from collections import Counter

import pytest

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.fixer import fix_text

from helpers import example_project

CATALOG = load_catalog()
CHECKERS = checker_classes()
# a suppression directive with its codes (`stabfix: ignore[SF101]`, `noqa: SF101, SF102`, `noqa`)
_DIRECTIVE = re.compile(r"(stabfix:\s*ignore(\[[^\]]*\])?|noqa(\s*:\s*[A-Z]+\d+(\s*,\s*[A-Z]+\d+)*\s*,?)?)", re.IGNORECASE)


def _classes(code: str, source: str):
    if not CHECKERS[code].meta:
        return [CHECKERS[code]]
    named = [other for other, spec in CATALOG.items() if other in source or spec.name in source]
    return [CHECKERS[other] for other in sorted({*named, code})]


def _comments(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.string.strip() for token in tokens if token.type == tokenize.COMMENT]


def _free_text(comment: str) -> str:
    """What a comment says besides a suppression directive (`# stabfix: ignore[SF101] why` -> `why`)."""
    text = _DIRECTIVE.sub("", comment.lstrip("#"))
    return " ".join(word for word in re.split(r"[\s#,;:\-]+", text) if word)


def _lost(code: str, before: str, after: str) -> Counter:
    if CHECKERS[code].meta:
        kept = Counter(filter(None, map(_free_text, _comments(after))))
        return Counter(filter(None, map(_free_text, _comments(before)))) - kept
    return Counter(_comments(before)) - Counter(_comments(after))


def _fixed(code: str, source: str, example) -> str:
    return fix_text(source, example.path, _classes(code, source), CATALOG, unsafe=True, project=example_project(example)).text


def _fixable_examples():
    for code, spec in sorted(CATALOG.items()):
        for index, example in enumerate(spec.bad):
            if example.fixed:
                yield code, index, example


def _rewritten_lines(before: str, after: str) -> list[int]:
    """0-based lines of `before` that the fix replaced or removed (or that new lines went next to)."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    lines: set[int] = set()
    for tag, start, end, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lines.update(range(start, end))
        elif tag == "insert":
            lines.add(min(start, len(before.splitlines()) - 1))
    return sorted(lines)


def _statement_lines(source: str) -> dict[int, tuple[int, int]]:
    """Each physical line (0-based) -> the first and last physical line of the logical line it is part of."""
    spans: dict[int, tuple[int, int]] = {}
    start = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT) and start is None:
            continue
        if start is None:
            start = token.start[0] - 1
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            end = token.start[0] - 1
            for line in range(start, end + 1):
                spans[line] = (start, end)
            start = None
    return spans


def _open_brackets(source: str, line: int) -> list[int]:
    """Columns right after each `(`/`[` on a line (outside strings): a comment and a newline fit there."""
    return [
        token.end[1]
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.OP and token.string in ("(", "[") and token.start[0] - 1 == line
    ]


def _variants(source: str, fixed: str):
    """The example with one comment put above, inside or after each statement the fix rewrites."""
    lines = source.splitlines(keepends=True)
    spans = _statement_lines(source)
    statements = sorted({spans[line] for line in _rewritten_lines(source, fixed) if line in spans})
    for number, (first, last) in enumerate(statements):
        indent = re.match(r"\s*", lines[first]).group(0)
        above = lines[:first] + [f"{indent}# why statement {number} is here\n"] + lines[first:]
        yield f"above-{number}", "".join(above)
        after = list(lines)
        after[last] = after[last].rstrip("\n") + f"  # trailing note {number}\n"
        yield f"after-{number}", "".join(after)
        for line in range(first, last + 1):
            for bracket, column in enumerate(_open_brackets(source, line)):
                inside = list(lines)
                text = inside[line]
                inside[line] = f"{text[:column]}  # inside note {number}.{bracket}\n{indent}    {text[column:].lstrip()}"
                yield f"inside-{number}-{line - first}.{bracket}", "".join(inside)


def _variant_cases():
    for code, index, example in _fixable_examples():
        for name, variant in _variants(example.code, example.fixed):
            try:
                compile(variant, "example.py", "exec")
            except SyntaxError:
                continue
            yield pytest.param(code, variant, example, id=f"{code}-bad-{index}-{name}")


@pytest.mark.parametrize(
    "code,source,example",
    [pytest.param(code, example.code, example, id=f"{code}-bad-{index}") for code, index, example in _fixable_examples()],
)
def test_fix_of_every_bad_example_keeps_every_comment(code, source, example):
    after = _fixed(code, source, example)
    assert after != source
    assert not _lost(code, source, after), after


VARIANTS = list(_variant_cases())


def test_every_fixable_rule_is_tried_with_comments_around_its_rewrite():
    fixable = {code for code, spec in CATALOG.items() if any(example.fixed for example in spec.bad)}
    assert {case.values[0] for case in VARIANTS} == fixable


@pytest.mark.parametrize("code,source,example", VARIANTS)
def test_fix_keeps_comments_put_around_the_rewritten_statement(code, source, example):
    after = _fixed(code, source, example)
    assert not _lost(code, source, after), after
    compile(after, "example.py", "exec")
