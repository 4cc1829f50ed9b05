"""GitHub Actions workflow commands: one `::error`/`::warning` annotation per finding."""

from __future__ import annotations

from stabfix.findings import RunResult

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(run: RunResult) -> str:
    lines = []
    for finding in run.findings:
        level = _LEVEL.get(finding.severity, "warning")
        title, message = f"{finding.code} {finding.name}", f"{finding.code} {finding.message}"
        if finding.cell is None:
            span = f"line={finding.line},col={finding.column},endLine={finding.end_line},endColumn={finding.end_column}"
        else:  # the .ipynb file's lines holding the code; its columns are the code's, not the JSON's
            span = f"line={finding.line},endLine={finding.end_line}"
            title += f" (cell {finding.cell}, line {finding.cell_line})"
            message += f" (cell {finding.cell}, line {finding.cell_line})"
        properties = f"file={_escape_property(finding.path)},{span},title={_escape_property(title)}"
        lines.append(f"::{level} {properties}::{_escape_data(message)}")
    for error in run.errors:
        lines.append(f"::error file={_escape_property(error.path)},title=stabfix::{_escape_data(error.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
