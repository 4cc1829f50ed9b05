"""Report formats: text for people, json/sarif for machines, github for workflow annotations."""

from __future__ import annotations

from stabfix.reports.github import render_github
from stabfix.reports.json_report import render_json
from stabfix.reports.sarif import render_sarif

FORMATS = ("text", "json", "sarif", "github")

__all__ = ["FORMATS", "render_github", "render_json", "render_sarif"]
