"""A finding as an LSP diagnostic: its range in the client's position units, the rule code with a link
to the rule's page, and what it says."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from stabfix.docs import rule_url
from stabfix.findings import Finding
from stabfix.server.positions import client_position

SOURCE = "stabfix"
_SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
}


def finding_range(codec: PositionCodec, lines: list[str], finding: Finding) -> types.Range:
    """Findings count lines and columns from 1; LSP from 0."""
    return types.Range(
        start=client_position(codec, lines, finding.line - 1, finding.column - 1),
        end=client_position(codec, lines, finding.end_line - 1, finding.end_column - 1),
    )


def diagnostic(codec: PositionCodec, lines: list[str], finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=finding_range(codec, lines, finding),
        severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code, finding.name)),
        source=SOURCE,
        message=finding.message,
        # What a client may show or filter on without parsing the message.
        data={"name": finding.name, "fix": finding.fix_safety},
    )
