"""Report formats: text for people, json/sarif for machines, github for workflow annotations."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")

__all__ = ["FORMATS", "render_github", "render_json", "render_sarif"]
_RENDERERS = {"render_github": "github", "render_json": "json_report", "render_sarif": "sarif"}


def __getattr__(name: str):
    # the command line names FORMATS at every start; a renderer (sarif reads the rule catalog) loads when used
    if name in _RENDERERS:
        from importlib import import_module

        return getattr(import_module(f"stabfix.reports.{_RENDERERS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
