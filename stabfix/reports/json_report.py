"""The JSON contract: {"version", "findings": [...], "errors": [...], "summary": {...}}."""

from __future__ import annotations

import json

from stabfix import __version__
from stabfix.reports.summary import summarize
from stabfix.findings import RunResult


def render_json(run: RunResult, files_scanned: int) -> str:
    document = {
        "version": __version__,
        "findings": [finding.to_json() for finding in run.findings],
        "errors": [{"path": error.path, "message": error.message} for error in run.errors],
        "summary": summarize(run, files_scanned),
    }
    return json.dumps(document, indent=2) + "\n"
