"""Analysing one file: pre-filter by rule tokens, parse once, run every selected checker in one traversal."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from stabfix.model import FileModel
from stabfix.model.traversal import children, walk
from stabfix.catalog import RuleSpec
from stabfix.checker import CheckContext, Checker, RawFinding
from stabfix.findings import Finding, Fix
from stabfix.suppression import Suppressions
from stabfix.target import TorchTarget, withheld_reason


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
    torch_target: TorchTarget | None = None,
) -> Analysis:
    """Findings of the given checkers on text, with suppressions applied, sorted by position; a fix whose
    API is newer than `torch_target` is withheld (the finding says why)."""
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
    return Analysis(module=module, findings=_locate(module, context, text, display_path, specs, meta, ran, torch_target))


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
    module: cst.Module,
    context: CheckContext,
    text: str,
    display_path: str,
    specs: dict[str, RuleSpec],
    meta: list[Checker],
    ran: dict[str, str],
    torch_target: TorchTarget | None = None,
) -> list[AnalysedFinding]:
    # Positions and parents cost a pass each, so only files with findings pay for them.
    positions = _Positions(module)
    suppressions = Suppressions.of(text)
    # The statement a finding sits in only matters to a suppression comment: most files have none.
    parents = _parents(module) if suppressions.by_line else None
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
        fix = report.fix
        withheld = withheld_reason(fix, torch_target) if fix is not None else ""
        if withheld:
            fix = None
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
            fix_safety=fix.safety if fix else "none",
            fix_description=fix.description if fix else "",
            fix_withheld=withheld,
        )
        located.setdefault(finding.sort_key(), AnalysedFinding(finding, fix))

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
        parent = parents.get(id(current))
        if parent is None:
            return node
        current = parent
    return current if not isinstance(current, cst.Module) else node


def _parents(module: cst.Module) -> dict[int, cst.CSTNode]:
    """id(node) -> its parent, for every node (what libcst's ParentNodeProvider gives, without its rebuilding pass)."""
    parents: dict[int, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


class _Positions:
    """libcst's PositionProvider positions, computed lazily: the module is generated top-level statement by
    top-level statement (the same codegen calls as `Module._codegen`, so the same positions) only as far as
    the nodes asked about, instead of the whole file up front."""

    def __init__(self, module: cst.Module) -> None:
        self.provider = PositionProvider()
        self.provider._computed = {}
        self._steps = self._codegen(module)

    def _codegen(self, module: cst.Module):
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, provider=self.provider
        )
        state.before_codegen(module)
        for node in (*module.header, *module.body, *module.footer):
            try:
                node._codegen(state)
            except (RecursionError, KeyError):
                # too deep for libcst's recursive codegen (a RecursionError can surface as a KeyError from
                # libcst's position bookkeeping): the caller reports the file as nested too deeply
                raise RecursionError("code nested too deeply to locate findings") from None
            yield
        # the end of Module._codegen_impl, then Module._codegen
        if module.has_trailing_newline:
            if len(state.tokens) == 0:
                state.add_token(state.default_newline)
        else:
            state.pop_trailing_newline()
        state.after_codegen(module)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        computed = self.provider._computed
        while node not in computed and next(self._steps, StopIteration) is not StopIteration:
            pass
        return computed[node]
