"""What `stabfix verify -- COMMAND` adds to a report: which runner ran it, how the command ended (stopped
by stabfix after `steps` optimizer steps, or ended by itself before), and the words that differ from
the entry mode. Pure Python (no torch)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.markup import escape

from stabfix.verify.runner import RunResult, run_child
from stabfix.verify.settings import Settings


def run_for(settings: Settings, project: Path, on_event: Callable[[dict[str, Any]], None] | None = None,
            snapshot: str | None = None) -> RunResult:
    """The command's run (`verify.run`) or the entry's (`verify.entry`)."""
    if settings.run:
        from stabfix.verify.command_run import run_command

        return run_command(settings, project, on_event)
    return run_child(settings, project, on_event, snapshot=snapshot)


def add_command_checks(settings: Settings, run: RunResult, report: dict[str, Any]) -> None:
    if not settings.run:
        return
    done = run.done or {}
    seen = done.get("steps_seen", len(run.steps))
    report["command"] = {"argv": list(settings.run), "stopped_by_stabfix": bool(done.get("stopped_by_stabfix")),
                         "steps_seen": seen}
    if report.get("error"):
        return
    for check in report.get("checks", []):
        if check["name"] == "loss" and check["status"] == "warn":
            check["message"] = ("no backward() on a one-element tensor was seen, so the loss is unknown; "
                                "loss finiteness was not checked")
    if done and not done.get("stopped_by_stabfix"):
        report["checks"].append({
            "name": "steps", "status": "warn",
            "message": f"the command ended by itself after {seen} optimizer step(s), fewer than the "
                       f"{settings.steps} asked for; the report covers those",
            "value": seen})


def print_command_end(console: Console, report: dict[str, Any]) -> None:
    info = report.get("command")
    if not info or report.get("error"):
        return
    command = escape(shlex.join(info["argv"]))
    if info["stopped_by_stabfix"]:
        console.print(f"[dim]stabfix stopped `{command}` after {info['steps_seen']} optimizer step(s)[/dim]")
    else:
        console.print(f"[yellow]![/yellow] `{command}` ended by itself after {info['steps_seen']} optimizer step(s)")
