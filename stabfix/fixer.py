"""Applying fixes: node replacements in rounds until nothing applicable is left, validated each round."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import libcst as cst

from stabfix.catalog import RuleSpec
from stabfix.checker import Checker
from stabfix.engine import Analysis, AnalysisError, analyse_text
from stabfix.findings import Fix
from stabfix.fixes.comments import replace_keeping_comments
from stabfix.model.source.syntax import node_code
from stabfix.target import TorchTarget

MAX_ROUNDS = 8


class FixError(Exception):
    """A fix would have produced invalid code; the file is left untouched."""


@dataclass
class FixOutcome:
    text: str
    applied: int  # fix operations (one may repair several findings: one import rewrite for two uses)
    remaining: Analysis
    # Findings the fixes repaired, counted per rule: what `scan` counted as fixable and the report says.
    resolved: int = 0


def fix_text(
    text: str,
    display_path: str,
    classes: list[type[Checker]],
    specs: dict[str, RuleSpec],
    unsafe: bool,
    analysis: Analysis | None = None,
    torch_target: TorchTarget | None = None,
    project=None,  # stabfix.project.ProjectView: the other files of the scan as this one sees them
) -> FixOutcome:
    applied = 0
    current = text
    analysis = analysis or analyse_text(current, display_path, classes, specs, torch_target, project)
    before = Counter(item.finding.code for item in analysis.findings)
    offered = Counter(item.finding.code for item in analysis.findings if _offered(item, unsafe))
    for _ in range(MAX_ROUNDS):
        fixes = [
            item.fix
            for item in analysis.findings
            if _offered(item, unsafe)
        ]
        if not fixes or analysis.module is None:
            break
        rewritten, count = _apply_round(analysis.module, fixes)
        if rewritten == current:
            break
        _validate(rewritten, display_path)
        current, applied = rewritten, applied + count
        analysis = analyse_text(current, display_path, classes, specs, torch_target, project)
    # A finding that another rule's fix repaired on the way (a `no_grad` that also ends a history leak) is not
    # counted: the report's number is the one `scan` gave as fixable.
    after = Counter(item.finding.code for item in analysis.findings)
    resolved = sum(min(count, max(0, before[code] - after[code])) for code, count in offered.items()) if current != text else 0
    return FixOutcome(text=current, applied=applied, remaining=analysis, resolved=resolved)


def _offered(item, unsafe: bool) -> bool:
    return item.fix is not None and (item.fix.safety == "safe" or unsafe)


def _apply_round(module: cst.Module, fixes: list[Fix]) -> tuple[str, int]:
    """Apply every fix whose nodes do not overlap an earlier one's; the rest wait for the next round."""
    changes: dict[int, object] = {}
    touched: set[int] = set()
    imports: list[str] = []
    count = 0
    for fix in fixes:
        covered = {id(node) for original in fix.changes for node in _subtree(original)}
        if covered & touched:
            continue
        touched |= covered
        changes.update({id(node): replacement for node, replacement in fix.changes.items()})
        imports.extend(fix.imports)
        count += 1
    rewritten = replace_keeping_comments(module, changes)
    imports = [name for name in dict.fromkeys(imports) if name not in _module_level_imports(rewritten)]
    if imports:
        # libcst.codemod pulls in libcst.matchers (slow to import): only fixes that add imports pay.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for name in imports:
            AddImportsVisitor.add_needed_import(context, name)
        rewritten = AddImportsVisitor(context).transform_module(rewritten)
    return rewritten.code, count


def _module_level_imports(module: cst.Module) -> set[str]:
    """Modules bound by a plain `import X` anywhere at the top level: AddImportsVisitor only sees the
    imports above the first other statement, and would add a second `import torch` above a
    `DATA_HUB = dict()` that precedes the file's imports."""
    names: set[str] = set()
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Import:
                names.update(
                    node_code(alias.name) for alias in small.names if alias.asname is None
                )
    return names


def _subtree(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _validate(text: str, display_path: str) -> None:
    try:
        cst.parse_module(text)
        compile(text, display_path, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, AnalysisError) as exc:
        raise FixError(f"a fix produced invalid code ({exc.__class__.__name__}); file left unchanged") from None


def fixed_by(module: cst.Module, fixes: list[Fix], display_path: str) -> str:
    """The code with these fixes made in one round, as `apply`'s first round makes them (an editor's
    quick fix for one finding). Raises FixError when the result would not compile."""
    rewritten, _ = _apply_round(module, fixes)
    _validate(rewritten, display_path)
    return rewritten
