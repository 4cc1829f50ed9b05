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
    of the findings; `quiet`: no summary line."""
    out: list[str] = _statistics(run) if statistics else _findings(run)
    for error in run.errors:
        out.append(f"[bold]{escape(error.path)}:[/bold] [bold red]error:[/bold red] {escape(error.message)}")
    if not quiet:
        out.append(_summary_line(run, files_scanned, mode))
    return "\n".join(out) + ("\n" if out else "")


def _statistics(run: RunResult) -> list[str]:
    counts = Counter((finding.code, finding.name) for finding in run.findings)
    fixable = {finding.code: finding.fix_safety for finding in run.findings if finding.fix_safety != "none"}
    marks = {"safe": "[*]", "unsafe": "[-]"}
    width = len(str(max(counts.values(), default=0)))
    return [
        f"{count:>{width}}  [bold red]{code}[/bold red]  {marks.get(fixable.get(code, ''), '   ')} {name}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


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
    files_word = "file" if files_scanned == 1 else "files"
    parts = []
    if mode == "noqa":
        entries = "entry" if applied == 1 else "entries"
        parts.append(f"Added {applied} noqa {entries} in {files_scanned} {files_word} scanned.")
    elif mode == "apply":
        parts.append(f"Applied {applied} fix{'es' if applied != 1 else ''}.")
        if findings:
            parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''} remain.")
        elif run.errors:
            parts.append("Nothing left to fix in the files that could be analysed.")
        else:
            parts.append("Nothing left to fix.")
    elif findings:
        parts.append(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} in {files_scanned} {files_word}.")
    elif run.errors:
        # a run with errors never says that all checks passed
        if files_scanned:
            parts.append(f"No findings in the files that could be analysed ({files_scanned} {files_word} scanned).")
    else:
        parts.append(f"All checks passed ({files_scanned} {files_word} scanned).")
    if findings and mode != "diff":
        if safe:
            parts.append(f"{safe} fixable with `stabfix apply`.")
        if unsafe:
            parts.append(f"{unsafe} more with `--unsafe-fixes`.")
    whole = [error for error in run.errors if not error.partial]
    if whole:
        parts.append(f"{len(whole)} path{'s' if len(whole) != 1 else ''} could not be analysed.")
    if len(whole) < len(run.errors):
        partly = len(run.errors) - len(whole)
        parts.append(f"{partly} path{'s were' if partly != 1 else ' was'} analysed only in part (a rule failed on it).")
    return " ".join(parts)
