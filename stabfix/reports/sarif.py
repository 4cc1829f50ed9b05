"""SARIF 2.1.0, shaped for GitHub code scanning (relative URIs, rule metadata, fingerprints)."""

from __future__ import annotations

import hashlib
import json

from stabfix import __version__
from stabfix.catalog import RuleSpec
from stabfix.docs import rule_url
from stabfix.findings import Finding, RunResult

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _rule_descriptor(spec: RuleSpec) -> dict:
    help_markdown = "\n\n".join(
        f"### {title}\n{spec.docs[key]}"
        for key, title in (
            ("what_it_does", "What it does"),
            ("why_is_this_bad", "Why is this bad?"),
            ("example", "Example"),
            ("use_instead", "Use instead"),
        )
    )
    return {
        "id": spec.code,
        "name": spec.name,
        "shortDescription": {"text": spec.summary},
        "fullDescription": {"text": spec.docs["what_it_does"]},
        "help": {"text": spec.docs["why_is_this_bad"], "markdown": help_markdown},
        "helpUri": rule_url(spec.code, spec.name),
        "defaultConfiguration": {"level": _LEVEL.get(spec.severity, "warning")},
        "properties": {"tags": [spec.category, "pytorch"], "fix_safety": spec.fix_safety},
    }


def _region(finding: Finding) -> dict:
    """A notebook finding's lines are the .ipynb file's lines holding its code; its columns are columns of
    the code, not of the JSON text, so the region names the lines only."""
    if finding.cell is not None:
        return {"startLine": finding.line, "endLine": finding.end_line}
    return {
        "startLine": finding.line,
        "startColumn": finding.column,
        "endLine": finding.end_line,
        "endColumn": finding.end_column,
    }


def render_sarif(run: RunResult, specs: dict[str, RuleSpec], codes: list[str]) -> str:
    rule_codes = sorted(set(codes) | {finding.code for finding in run.findings})
    index = {code: position for position, code in enumerate(rule_codes)}
    results = []
    for finding in run.findings:
        fingerprint = hashlib.sha256(
            f"{finding.path}:{finding.code}:{finding.message}".encode()
        ).hexdigest()[:32]
        properties = {"fix_safety": finding.fix_safety}
        if finding.fix_withheld:
            properties["fix_withheld"] = finding.fix_withheld
        message = finding.message
        if finding.cell is not None:
            properties.update(cell=finding.cell, cell_line=finding.cell_line, cell_end_line=finding.cell_end_line)
            message += f" (cell {finding.cell}, line {finding.cell_line})"
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": index[finding.code],
                "level": _LEVEL.get(finding.severity, "warning"),
                "message": {"text": message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
                            "region": _region(finding),
                        }
                    }
                ],
                "partialFingerprints": {"primaryLocationLineHash": fingerprint},
                "properties": properties,
            }
        )
    notifications = [
        {
            "level": "error",
            "message": {"text": error.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": error.path}}}],
        }
        for error in run.errors
    ]
    document = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "stabfix",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://pypi.org/project/stabfix/",
                        "rules": [_rule_descriptor(specs[code]) for code in rule_codes],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {"executionSuccessful": not any(error.fatal for error in run.errors),
                     "toolExecutionNotifications": notifications}
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
