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
        properties = (
            f"file={_escape_property(finding.path)},line={finding.line},col={finding.column},"
            f"endLine={finding.end_line},endColumn={finding.end_column},"
            f"title={_escape_property(f'{finding.code} {finding.name}')}"
        )
        lines.append(f"::{level} {properties}::{_escape_data(f'{finding.code} {finding.message}')}")
    for error in run.errors:
        lines.append(f"::error file={_escape_property(error.path)},title=stabfix::{_escape_data(error.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
