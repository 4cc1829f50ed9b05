"""The merged report of a multi-rank run: each rank analysed as a single-process run, the cross-rank
checks (`ranks.compare_ranks`), how each rank ended, a table with a column per rank. Pure Python.

The report keeps the single-process shape, filled from rank 0 (so `--json` readers, `--baseline` and
`--plot` keep working), and adds `ranks`: every rank's report, state and the cross-rank checks. The
checks list gets the cross-rank verdicts and the other ranks' failures (`rank 1: memory growth`).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from stabfix import exit_codes
from stabfix.verify.metrics import analyze, fmt_bytes, fmt_num
from stabfix.verify.rank_runs import RankRuns
from stabfix.verify.ranks import compare_ranks
from stabfix.verify.settings import Settings

_MARKS = {"pass": "[green]✓[/green]", "fail": "[bold red]✗[/bold red]", "warn": "[yellow]![/yellow]", "skip": "[dim]-[/dim]"}


def rank_report(settings: Settings, ranks: RankRuns, project: str) -> dict[str, Any]:
    from stabfix.verify.command_report import add_command_checks

    per_rank: dict[int, dict[str, Any]] = {}
    for rank, run in sorted(ranks.runs.items()):
        per_rank[rank] = analyze(settings, run, f"{project} (rank {rank})")
        add_command_checks(settings, run, per_rank[rank])
    peaks = {rank: rep["summary"].get("peak_memory_bytes") for rank, rep in per_rank.items()}
    cross = compare_ranks({rank: rep["steps"] for rank, rep in per_rank.items()}, peaks)
    report = dict(per_rank[0])
    report["checks"] = list(report.get("checks", []))
    for rank, rep in per_rank.items():
        if rank != 0:
            report["checks"] += [{**c, "name": f"rank {rank}: {c['name']}", "rank": rank}
                                 for c in rep.get("checks", []) if c["status"] == "fail"]
    report["checks"] += [{**c, "name": f"ranks: {c['name']}"} for c in cross if c["status"] != "skip"]
    failed_ranks = [s for _, s in sorted(ranks.states.items()) if s["state"] not in ("ok", "ended")]
    report["ranks"] = {
        "nproc_per_node": len(ranks.states),
        "launcher": ranks.argv,
        "states": {str(rank): state for rank, state in sorted(ranks.states.items())},
        "checks": cross,
        "reports": {str(rank): rep for rank, rep in per_rank.items()},
        "left_running": ranks.left_running,
    }
    if failed_ranks:
        first = _first_failure(failed_ranks)
        report["error"] = {"kind": first["kind"], "phase": "step" if first["step"] else "command",
                           "step": first["step"], "rank": first["rank"], "message": first["message"],
                           "traceback": first.get("stack")}
        report["status"], report["exit_code"] = "error", exit_codes.ERROR
    elif any(c["status"] == "fail" for c in report["checks"]):
        report["status"], report["exit_code"] = "fail", exit_codes.FINDINGS
    else:
        report["status"] = "pass" if report.get("exit_code", 0) == 0 else report.get("status")
    return report


def _first_failure(states: list[dict[str, Any]]) -> dict[str, Any]:
    """The rank to blame first: torchrun's first observed failure, then one that died, then one that
    hung, then the rest."""
    order = {"died": 0, "hung": 1, "stopped": 2}
    return min(states, key=lambda s: (not s.get("first_failure"), order.get(s["state"], 3), s["rank"]))


def rank_table(report: dict[str, Any]) -> Table:
    info = report["ranks"]
    ranks = sorted(info["states"], key=int)
    table = Table(title=f"per rank ({len(ranks)} processes, torchrun)", title_justify="left", header_style="bold")
    table.add_column("metric")
    for rank in ranks:
        table.add_column(f"rank {rank}", justify="right")
    reports = info["reports"]

    def cells(get: Any) -> list[str]:
        return [get(reports.get(rank, {}), info["states"][rank]) for rank in ranks]

    def summary(key: str, fmt: Any) -> Any:
        return lambda rep, state: fmt(rep.get("summary", {}).get(key)) if rep.get("steps") else "-"

    table.add_row("state", *cells(lambda rep, state: state["state"] + (f" (step {state['step']})"
                                                                        if state["state"] in ("hung", "died", "stopped")
                                                                        and state["step"] else "")))
    table.add_row("steps", *cells(lambda rep, state: str(state["steps_done"])))
    table.add_row("loss (last)", *cells(summary("loss_last", fmt_num)))
    table.add_row("grad norm (max)", *cells(summary("grad_norm_max", fmt_num)))
    table.add_row("peak memory", *cells(summary("peak_memory_bytes", fmt_bytes)))
    table.add_row("live after last step", *cells(summary("live_end_bytes", fmt_bytes)))
    table.add_row("step time (median)", *cells(summary("step_time_median_ms",
                                                        lambda v: f"{v:.1f} ms" if v is not None else "-")))
    table.add_row("failed checks", *cells(lambda rep, state: str(sum(c["status"] == "fail" for c in rep.get("checks", [])))))
    return table


def print_rank_report(console: Console, report: dict[str, Any]) -> None:
    from stabfix.verify.render import print_report

    info = report["ranks"]
    console.print()
    console.print(rank_table(report))
    for rank, state in sorted(info["states"].items(), key=lambda item: int(item[0])):
        if state["state"] in ("ok", "ended"):
            continue
        console.print(f"[bold red]✗[/bold red] {escape(state['message'])}", highlight=False)
        if state.get("stack"):
            console.print(Rule(f"rank {rank}", style="red"))
            console.print(Text(state["stack"]), highlight=False)
            console.print(Rule(style="red"))
    if report.get("error"):
        if not any(state.get("stack") for state in info["states"].values()) and report.get("output_tail"):
            console.print(Rule("last output of the command", style="red"))  # e.g. torchrun could not start
            console.print(Text(report["output_tail"]), highlight=False)
            console.print(Rule(style="red"))
        console.print()
        for check in info["checks"]:
            console.print(f"{_MARKS[check['status']]} ranks: {escape(check['name'])}: {escape(check['message'])} "
                          "[dim](steps every rank completed)[/dim]", highlight=False)
        console.print()
        console.print(f"[bold red]verify could not finish[/bold red]: {escape(report['error']['message'])}")
        return
    for check in info["checks"]:
        if check["status"] == "skip":
            console.print(f"{_MARKS['skip']} ranks: {escape(check['name'])}: {escape(check['message'])}")
    print_report(console, report)
