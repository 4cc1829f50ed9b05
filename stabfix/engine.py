"""Analysing one file: pre-filter by rule tokens, parse once, run every selected checker in one traversal."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from stabfix.model import FileModel
from stabfix.model.traversal import walk
from stabfix.catalog import RuleSpec
from stabfix.checker import CheckContext, Checker, RawFinding
from stabfix.findings import Finding, Fix
from stabfix.suppression import Suppressions


class AnalysisError(Exception):
    """The file could not be parsed; the message is one line."""


@dataclass
class AnalysedFinding:
    finding: Finding
    fix: Fix | None


@dataclass
class Analysis:
    module: cst.Module | None
    findings: list[AnalysedFinding]


def checkers_for_text(text: str, classes: list[type[Checker]]) -> list[type[Checker]]:
    return [cls for cls in classes if cls.may_fire(text)]


def analyse_text(
    text: str,
    display_path: str,
    classes: list[type[Checker]],
    specs: dict[str, RuleSpec],
) -> Analysis:
    """Findings of the given checkers on text, with suppressions applied, sorted by position."""
    active = checkers_for_text(text, classes)
    if not active:
        # No rule can fire, so skip libcst; CPython's own parser still reports broken files, fast.
        check_syntax(text, display_path)
        return Analysis(module=None, findings=[])
    module = parse(text)
    model = FileModel(need for cls in active for need in cls.needs)
    context = CheckContext(path=display_path, text=text, model=model)
    checkers = [cls(context) for cls in active]
    walk(module, [*model.visitors(), *checkers])
    meta = [checker for checker in checkers if checker.meta]
    if not context.reports and not meta:
        return Analysis(module=module, findings=[])
    ran = {cls.code: specs[cls.code].name for cls in classes if not cls.meta}
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return Analysis(module=module, findings=_locate(wrapper, context, text, display_path, specs, meta, ran))


def check_syntax(text: str, display_path: str) -> None:
    try:
        ast.parse(text, filename=display_path)
    except SyntaxError as exc:
        message = (exc.msg or "invalid syntax").splitlines()[0]
        hint = " (Python 2 code? stabfix reads Python 3)" if _looks_like_python2(text) else ""
        raise AnalysisError(f"syntax error at line {exc.lineno}, column {exc.offset or 1}: {message}{hint}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise AnalysisError(f"cannot parse: {exc.__class__.__name__}") from None


def parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
        hint = " (Python 2 code? stabfix reads Python 3)" if _looks_like_python2(text) else ""
        raise AnalysisError(f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {message}{hint}") from None
    except RecursionError:
        raise AnalysisError("code nested too deeply to parse") from None


def _looks_like_python2(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("print ") and not stripped.startswith("print ("):
            return True
        if stripped.startswith("exec ") or " except " in f" {stripped}" and ", e:" in stripped:
            return True
    return False


def _locate(
    wrapper: MetadataWrapper,
    context: CheckContext,
    text: str,
    display_path: str,
    specs: dict[str, RuleSpec],
    meta: list[Checker],
    ran: dict[str, str],
) -> list[AnalysedFinding]:
    # Positions and parents cost a full pass each, so only files with findings pay for them.
    positions = wrapper.resolve(PositionProvider)
    suppressions = Suppressions.of(text)
    # The statement a finding sits in only matters to a suppression comment: most files have none.
    parents = wrapper.resolve(ParentNodeProvider) if suppressions.by_line else None
    used: set[tuple[int, str]] = set()  # (comment line, entry) of every directive that suppressed a finding
    located: dict[tuple, AnalysedFinding] = {}

    def locate(report: RawFinding) -> None:
        spec = specs[report.code]
        where = positions[report.node]
        matches = suppressions.matching(where.start.line, spec.code, spec.name)
        if parents is not None:
            statement_line = positions[_enclosing_statement(report.node, parents)].start.line
            matches |= suppressions.matching(statement_line, spec.code, spec.name)
        if matches:
            used.update(matches)
            return
        finding = Finding(
            code=spec.code,
            name=spec.name,
            path=display_path,
            line=where.start.line,
            column=where.start.column + 1,
            end_line=where.end.line,
            end_column=where.end.column + 1,
            message=report.message,
            severity=spec.severity,
            fix_safety=report.fix.safety if report.fix else "none",
            fix_description=report.fix.description if report.fix else "",
        )
        located.setdefault(finding.sort_key(), AnalysedFinding(finding, report.fix))

    for report in list(context.reports):
        locate(report)
    for checker in meta:
        # A meta rule judges the directives only once every other rule's findings were matched to them.
        count = len(context.reports)
        checker.audit(lambda node: positions[node].start.line, used, ran)
        for report in context.reports[count:]:
            locate(report)
    return sorted(located.values(), key=lambda item: item.finding.sort_key())


def _enclosing_statement(node: cst.CSTNode, parents) -> cst.CSTNode:
    current = node
    while not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.Module)):
        parent = parents.get(current)
        if parent is None:
            return node
        current = parent
    return current if not isinstance(current, cst.Module) else node
