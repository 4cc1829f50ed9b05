"""Human-readable findings: location, rule, message, a code frame and the fix safety."""

from __future__ import annotations

from pathlib import Path

from collections import Counter

from rich.markup import escape

from stabfix.docs import rule_url
from stabfix.findings import Finding, RunResult

_SAFETY_NOTE = {
    "safe": "fix (safe): run `stabfix apply`",
    "unsafe": "fix (unsafe, changes behaviour): run `stabfix apply --unsafe-fixes`",
    "none": "no automatic fix",
}


def _frame(lines: list[str], line: int, column: int, end_line: int, end_column: int) -> list[str]:
    if not 1 <= line <= len(lines):
        return []
    width = len(str(min(len(lines), line + 1)))
    gutter = " " * width
    out = [f"[blue]{gutter} |[/blue]"]
    if line > 1:
        out.append(f"[blue]{line - 1:>{width}} |[/blue] {escape(lines[line - 2])}")
    text = lines[line - 1]
    out.append(f"[blue]{line:>{width}} |[/blue] {escape(text)}")
    stop = end_column if end_line == line else len(text) + 1
    carets = "^" * max(1, stop - column)
    out.append(f"[blue]{gutter} |[/blue] {' ' * (column - 1)}[bold red]{carets}[/bold red]")
    return out


def render_text(
    run: RunResult, files_scanned: int, mode: str = "scan", quiet: bool = False, statistics: bool = False
) -> str:
    """Rich markup; the caller prints it with or without colour. `statistics`: counts per rule instead
    of the findings; `quiet`: no summary line. The errors are `render_errors`', for stderr."""
    out: list[str] = _statistics(run) if statistics else _findings(run)
    if not quiet:
        out.append(_summary_line(run, files_scanned, mode))
    return "\n".join(out) + ("\n" if out else "")


def render_errors(run: RunResult) -> str:
    """Each file's error, one line each, in Rich markup: the text report's errors go to stderr."""
    return "".join(
        f"[bold]{escape(error.path)}:[/bold] [bold red]error:[/bold red] {escape(error.message)}\n" for error in run.errors
    )


def _statistics(run: RunResult) -> list[str]:
    """One row per rule. The mark is the best fix its findings have (`[*]` when `stabfix apply` fixes some,
    `[-]` when only `--unsafe-fixes` does); a rule whose findings differ lists how many have which, so
    the rows add up to the summary's fixable counts."""
    by_code: dict[tuple[str, str], Counter] = {}
    for finding in run.findings:
        by_code.setdefault((finding.code, finding.name), Counter())[finding.fix_safety] += 1
    width = len(str(max((sum(safeties.values()) for safeties in by_code.values()), default=0)))
    rows = []
    for (code, name), safeties in sorted(by_code.items(), key=lambda item: (-sum(item[1].values()), item[0])):
        mark = "[*]" if safeties["safe"] else "[-]" if safeties["unsafe"] else "   "
        row = f"{sum(safeties.values()):>{width}}  [bold red]{code}[/bold red]  {escape(mark)} {name}"
        if len(+safeties) > 1:
            row += " (" + ", ".join(
                f"{safeties[safety]} {_SAFETY_WORD[safety]}" for safety in ("safe", "unsafe", "none") if safeties[safety]
            ) + ")"
        rows.append(row)
    return rows


_SAFETY_WORD = {"safe": "safe", "unsafe": "unsafe", "none": "without fix"}


def _count(number: int, singular: str, plural: str | None = None) -> str:
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


def _location(finding: Finding) -> str:
    """`train.py:12:5`; in a notebook `train.ipynb:cell 3:2:5` (cell, line in the cell, column), as ruff writes it."""
    if finding.cell is not None:
        return f"{finding.path}:cell {finding.cell}:{finding.cell_line}:{finding.column}"
    return f"{finding.path}:{finding.line}:{finding.column}"


def _frame_of(finding: Finding, sources: dict, cells: dict) -> list[str]:
    if finding.cell is not None:
        if finding.path not in cells:
            from stabfix.notebook import cell_lines  # only reports with notebook findings read one

            cells[finding.path] = cell_lines(finding.path)
        lines = cells[finding.path].get(finding.cell, [])
        return _frame(lines, finding.cell_line, finding.column, finding.cell_end_line, finding.end_column)
    if finding.path not in sources:
        try:
            sources[finding.path] = Path(finding.path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            sources[finding.path] = []
    return _frame(sources[finding.path], finding.line, finding.column, finding.end_line, finding.end_column)


def _findings(run: RunResult) -> list[str]:
    out: list[str] = []
    sources: dict[str, list[str]] = {}
    cells: dict[str, dict[int, list[str]]] = {}
    for finding in run.findings:
        out.append(
            f"[bold]{escape(_location(finding))}:[/bold] "
            f"[bold red]{finding.code}[/bold red] [dim]\\[{finding.name}][/dim] {escape(finding.message)}"
        )
        out.extend(_frame_of(finding, sources, cells))
        note = _SAFETY_NOTE[finding.fix_safety]
        if finding.fix_description:
            note += f" — {finding.fix_description}"
        elif finding.fix_withheld:
            note += f" — {finding.fix_withheld}"
        out.append(f"[blue]  =[/blue] {escape(note)}")
        out.append(f"[blue]  =[/blue] help: {escape(rule_url(finding.code, finding.name))}")
        out.append("")
    return out


def _summary_line(run: RunResult, files_scanned: int, mode: str) -> str:
    findings = run.findings
    applied = sum(result.fixes_applied for result in run.results)
    safe = sum(1 for finding in findings if finding.fix_safety == "safe")
    unsafe = sum(1 for finding in findings if finding.fix_safety == "unsafe")
    parts = []
    if mode == "noqa":
        parts.append(f"Added {_count(applied, 'noqa entry', 'noqa entries')} in {_count(files_scanned, 'file')} scanned.")
    elif mode == "apply":
        parts.append(f"Applied {_count(applied, 'fix', 'fixes')}.")
        if findings:
            parts.append(f"{_count(len(findings), 'finding')} {'remains' if len(findings) == 1 else 'remain'}.")
        elif run.errors:
            parts.append("Nothing left to fix in the files that could be analysed.")
        else:
            parts.append("Nothing left to fix.")
    elif findings:
        with_findings = len({finding.path for finding in findings})
        parts.append(
            f"Found {_count(len(findings), 'finding')} in {_count(with_findings, 'file')} ({files_scanned} scanned)."
        )
    elif run.errors:
        # a run with errors never says that all checks passed
        if files_scanned:
            parts.append(f"No findings in the files that could be analysed ({_count(files_scanned, 'file')} scanned).")
    else:
        parts.append(f"All checks passed ({_count(files_scanned, 'file')} scanned).")
    if findings and mode != "diff":
        if safe:
            parts.append(f"{safe} fixable with `stabfix apply`.")
        if unsafe:
            parts.append(f"{unsafe} more with `--unsafe-fixes`.")
    whole = [error for error in run.errors if not error.partial]
    if whole:
        parts.append(f"{_count(len(whole), 'path')} could not be analysed.")
    if len(whole) < len(run.errors):
        partly = len(run.errors) - len(whole)
        parts.append(f"{partly} path{'s were' if partly != 1 else ' was'} analysed only in part (a rule failed on it).")
    return " ".join(parts)


def diff_note(run: RunResult, unsafe: bool) -> str:
    """`apply --diff`'s one line on stderr (stdout carries only the diffs): what it would change, or why
    nothing, naming the rules whose fixes need `--unsafe-fixes`."""
    changed = [result for result in run.results if result.diff]
    would_apply = sum(result.fixes_applied for result in changed)
    waiting = [finding for finding in run.findings if finding.fix_safety == "unsafe"] if not unsafe else []
    codes = ", ".join(sorted({finding.code for finding in waiting}))
    if changed:
        line = f"Would fix {_count(would_apply, 'finding')} in {_count(len(changed), 'file')}."
        if waiting:
            line += f" {_count(len(waiting), 'more finding')} ({codes}) with `--unsafe-fixes`."
        return line
    if waiting:
        kind = "No safe fixes" if not unsafe else "No fixes"
        have = "has an unsafe fix" if len(waiting) == 1 else "have unsafe fixes"
        return f"{kind}; {_count(len(waiting), 'finding')} {have} ({codes}): rerun with --unsafe-fixes"
    unfixable = run.findings
    if unfixable:
        codes = ", ".join(sorted({finding.code for finding in unfixable}))
        have = "has" if len(unfixable) == 1 else "have"
        return f"Nothing to change; {_count(len(unfixable), 'finding')} {have} no automatic fix ({codes})."
    if run.errors:
        return "Nothing to change in the files that could be analysed."
    return "Nothing to change."
