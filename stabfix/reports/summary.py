"""Counts shared by every report format."""

from __future__ import annotations

from collections import Counter

from stabfix.findings import RunResult


def summarize(run: RunResult, files_scanned: int) -> dict:
    findings = run.findings
    by_code = Counter(finding.code for finding in findings)
    by_safety = Counter(finding.fix_safety for finding in findings)
    return {
        "files_scanned": files_scanned,
        "findings": len(findings),
        "errors": len(run.errors),
        "fixable_safe": by_safety.get("safe", 0),
        "fixable_unsafe": by_safety.get("unsafe", 0),
        "fixes_applied": sum(result.fixes_applied for result in run.results),
        "by_code": dict(sorted(by_code.items())),
    }
