"""Analysing one file: pre-filter by rule tokens, parse once, run every selected checker in one traversal."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from stabfix.model import ALWAYS_BUILT, FileModel, required_parts
from stabfix.model.source.node_fields import children
from stabfix.model.source.traversal import Isolation, walk
from stabfix.project.outline import cpython_parse_recurses, cpython_parses, cpython_tree
from stabfix import collector
from stabfix.catalog import RuleSpec
from stabfix.checker import CheckContext, Checker, RawFinding
from stabfix.cst_parse import parse_source
from stabfix.findings import Finding, Fix
from stabfix.shape import Shape
from stabfix.suppression import Suppressions
from stabfix.target import TorchTarget, withheld_reason

if TYPE_CHECKING:
    from stabfix.project import ProjectView


class AnalysisError(Exception):
    """The file could not be parsed; the message is one line."""


@dataclass
class AnalysedFinding:
    finding: Finding
    fix: Fix | None


@dataclass(frozen=True)
class RuleFailure:
    """A rule that raised on this file (or whose model part did): it was dropped for the file, with
    every finding it had made, and the other rules ran on."""

    code: str
    error: str  # "KeyError: 'x'"
    part: str | None = None  # the model part that failed and took the rule with it


@dataclass
class Analysis:
    module: cst.Module | None
    findings: list[AnalysedFinding]
    failures: list[RuleFailure] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """The file's one-line error for its failed rules, None when every rule ran."""
        return failures_message(self.failures)


def failures_message(failures: list[RuleFailure]) -> str | None:
    """`SF106 internal error (KeyError: 'x'); please report it`; the rules a failed model part took
    with it are named together: `SF101, SF103 internal error in the model part `names` (...)`."""
    if not failures:
        return None
    codes: dict[tuple[str, str], set[str]] = {}
    for failure in failures:
        codes.setdefault((failure.part or "", failure.error), set()).add(failure.code)
    parts = []
    for (part, error), failed in sorted(codes.items(), key=lambda item: (min(item[1]), item[0])):
        where = f" in the model part `{part}`" if part else ""
        parts.append(f"{', '.join(sorted(failed))} internal error{where} ({error})")
    return "; ".join(parts) + "; please report it"


def checkers_for_text(
    text: str, classes: list[type[Checker]], project: Optional["ProjectView"] = None, path: str = ""
) -> list[type[Checker]]:
    """The rules that may fire on the text: its text gates, then (where a rule has one) its structural gate on
    CPython's tree of the file. A file CPython refuses keeps every rule its text lets by: libcst reports why."""
    return _gated(text, classes, project, path)[0]


def _gated(
    text: str, classes: list[type[Checker]], project: Optional["ProjectView"], path: str
) -> tuple[list[type[Checker]], Optional[ast.Module]]:
    """`checkers_for_text`, with CPython's tree of the text when the gates parsed it (None otherwise)."""
    active = [cls for cls in classes if cls.may_fire(text, project)]
    if not any(cls.has_shape_gate() for cls in active):
        return active, None
    tree = cpython_tree(text)
    if tree is None:
        return active, None
    shape = Shape(tree, text, path, project)
    return [cls for cls in active if cls.shape_allows(shape)], tree


def analyse_text(
    text: str,
    display_path: str,
    classes: list[type[Checker]],
    specs: dict[str, RuleSpec],
    torch_target: TorchTarget | None = None,
    project: Optional["ProjectView"] = None,
) -> Analysis:
    """Findings of the given checkers on text, with suppressions applied, sorted by position; a fix whose
    API is newer than `torch_target` is withheld (the finding says why). `project`: the other files of the
    scan as this one sees them (what it consulted is recorded in `project.consulted`). Runs with the cyclic
    collector paused (`stabfix.collector`)."""
    with collector.paused():
        return _analyse(text, display_path, classes, specs, torch_target, project)


def _analyse(
    text: str,
    display_path: str,
    classes: list[type[Checker]],
    specs: dict[str, RuleSpec],
    torch_target: TorchTarget | None,
    project: Optional["ProjectView"],
) -> Analysis:
    active, tree = _gated(text, classes, project, display_path)
    if not active:
        # No rule can fire, so skip libcst; CPython's own parser still reports broken files, fast.
        check_syntax(text, display_path)
        return Analysis(module=None, findings=[])
    if _too_deep_for_python(text):
        # libcst needs minutes (then may crash) on what the analysis could not walk anyway: fail fast
        raise RecursionError("code nested too deeply to analyse")
    module = project.parsed(text, parse) if project is not None else parse(text)
    try:
        context, checkers = _traverse(module, text, display_path, active, project, tree)
        failures: dict[str, RuleFailure] = {}
    except (RecursionError, MemoryError):
        raise
    except Exception:
        # A rule or model part raised: walk again with every visitor guarded, so only what failed
        # (and the rules reading a failed part) is dropped. Fresh visitors, so nothing half-built is
        # reused, and the findings of the others are those of a run without the failed rules.
        context, checkers, failures = _traverse_isolated(module, text, display_path, active, project, tree)
    meta = [checker for checker in checkers if checker.meta and checker.code not in failures]
    if not context.reports and not meta:
        return Analysis(module=module, findings=[], failures=list(failures.values()))
    # A failed rule's directives are not judged: its findings were never matched to them.
    ran = {cls.code: specs[cls.code].name for cls in classes if not cls.meta}
    findings = _locate(module, context, text, display_path, specs, meta, ran, failures, torch_target)
    return Analysis(module=module, findings=findings, failures=list(failures.values()))


def _traverse(
    module: cst.Module, text: str, display_path: str, active: list[type[Checker]], project=None, tree=None
):
    model = FileModel((need for cls in active for need in cls.needs), project)
    context = CheckContext(
        path=display_path, text=text, model=model, module=module, project=project, cpython_tree=tree
    )
    checkers = [cls(context) for cls in active]
    walk(module, [*model.visitors(), *checkers], parents=model.tree.parents)
    return context, checkers


def _traverse_isolated(
    module: cst.Module, text: str, display_path: str, active: list[type[Checker]], project=None, tree=None
):
    """The traversal with fault isolation: a checker that raises is dropped; a model part that raises is
    dropped with every part and checker that reads it (their facts would be incomplete)."""
    model = FileModel((need for cls in active for need in cls.needs), project)
    context = CheckContext(
        path=display_path, text=text, model=model, module=module, project=project, cpython_tree=tree
    )
    failures: dict[str, RuleFailure] = {}
    checkers: list[Checker] = []
    for cls in active:
        try:
            checkers.append(cls(context))
        except (RecursionError, MemoryError):
            raise
        except Exception as error:
            failures[cls.code] = RuleFailure(cls.code, describe_error(error))
    part_names = {id(part): name for name, part in model.parts.items()}
    visitors = [*model.visitors(), *checkers]

    def parts_read(visitor) -> set[str]:
        if isinstance(visitor, Checker):
            needs = visitor.needs
        else:
            needs = [name for name in [part_names[id(visitor)]] if name not in ALWAYS_BUILT]
        return required_parts(needs) | set(ALWAYS_BUILT)

    reads = {id(visitor): parts_read(visitor) for visitor in visitors}

    def dependents(visitor):
        failed = part_names.get(id(visitor))
        if failed is None:
            return []
        return [other for other in visitors if other is not visitor and failed in reads[id(other)]]

    isolation = Isolation(dependents)
    walk(module, visitors, isolation, parents=model.tree.parents)
    for visitor, error in isolation.failures:
        if isinstance(visitor, Checker):
            failures.setdefault(visitor.code, RuleFailure(visitor.code, describe_error(error)))
            continue
        part = part_names[id(visitor)]
        for checker in checkers:
            if part in reads[id(checker)]:
                failures.setdefault(checker.code, RuleFailure(checker.code, describe_error(error), part))
    context.reports[:] = [report for report in context.reports if report.code not in failures]
    return context, [checker for checker in checkers if checker.code not in failures], failures


def describe_error(error: BaseException) -> str:
    """`KeyError: 'x'`, on one line and short: what a user can paste into a bug report."""
    try:
        detail = str(error)
    except RecursionError:  # an exception carrying a deeply nested node: its repr recurses too
        detail = "(message too deeply nested to show)"
    detail = (detail.splitlines() or [""])[0]
    if len(detail) > 160:
        detail = detail[:157] + "..."
    return f"{error.__class__.__name__}: {detail}" if detail else error.__class__.__name__


def check_syntax(text: str, display_path: str) -> None:
    if cpython_parses(text):  # often already known: the file was outlined for another file's imports
        return
    try:
        ast.parse(text, filename=display_path)
    except SyntaxError as exc:
        message = (exc.msg or "invalid syntax").splitlines()[0]
        hint = " (Python 2 code? stabfix reads Python 3)" if _looks_like_python2(text) else ""
        raise AnalysisError(f"syntax error at line {exc.lineno}, column {exc.offset or 1}: {message}{hint}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise AnalysisError(f"cannot parse: {exc.__class__.__name__}") from None


def _too_deep_for_python(text: str) -> bool:
    """CPython itself cannot build this code's tree (`x = a0 + ... + a20000`): nested deeper than any
    recursive walk of it can go. Its parser takes milliseconds where libcst's takes minutes."""
    return cpython_parse_recurses(text)


def parse(text: str) -> cst.Module:
    """The file's tree (built without libcst's per-node validation: `stabfix.cst_parse`); a syntax error
    becomes a one-line AnalysisError."""
    try:
        return parse_source(text)
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
    failures: dict[str, RuleFailure],
    torch_target: TorchTarget | None = None,
) -> list[AnalysedFinding]:
    """Findings with positions, suppressions applied; a rule whose findings cannot be located or whose
    audit raises joins `failures`, its findings dropped."""
    # Positions and parents cost a pass each, so only files with findings pay for them; the positions are
    # the context's table, which a rule may already have filled in part for its messages.
    positions = context.positions
    suppressions = Suppressions.directives_of(text)
    # The statement a finding sits in only matters to a suppression comment: most files have none.
    parents = _Parents(module, context.model.tree.parents) if suppressions.by_line else None
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

    def isolated(code: str, action: Callable[[], None]) -> None:
        if code in failures:
            return
        try:
            action()
        except (RecursionError, MemoryError):
            raise
        except Exception as error:
            failures[code] = RuleFailure(code, describe_error(error))

    for report in list(context.reports):
        isolated(report.code, lambda: locate(report))
    for checker in meta:
        # A meta rule judges the directives only once every other rule's findings were matched to them;
        # a rule that failed on this file is not judged (its findings never reached the directives).
        count = len(context.reports)
        judged = {code: name for code, name in ran.items() if code not in failures}
        isolated(checker.code, lambda: checker.audit(lambda node: positions[node].start.line, used, judged))
        for report in context.reports[count:]:
            isolated(report.code, lambda: locate(report))
    kept = (item for item in located.values() if item.finding.code not in failures)
    return sorted(kept, key=lambda item: item.finding.sort_key())


def _enclosing_statement(node: cst.CSTNode, parents) -> cst.CSTNode:
    current = node
    while not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.Module)):
        parent = parents.get(id(current))
        if parent is None:
            return node
        current = parent
    return current if type(current) is not cst.Module else node


class _Parents:
    """id(node) -> its parent: the traversal's record, and for a node it did not record (whitespace and
    comments it skips) a walk of the whole module, made once. Only files with a directive ask."""

    def __init__(self, module: cst.Module, recorded: dict[int, cst.CSTNode]) -> None:
        self.module, self.recorded = module, recorded
        self.walked: Optional[dict[int, cst.CSTNode]] = None

    def get(self, key: int) -> Optional[cst.CSTNode]:
        found = self.recorded.get(key)
        if found is None:
            if self.walked is None:
                self.walked = _parents(self.module)
            found = self.walked.get(key)
        return found


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
