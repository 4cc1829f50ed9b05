"""Terminal output for `stabfix verify` (rich): live step rows, summary, checks, survivors, errors."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from stabfix.verify.metrics import fmt_bytes, fmt_num
from stabfix.verify.settings import Settings

ROW = "{step:>5} {loss:>10} {gnorm:>10} {peak:>10} {live:>10} {dlive:>11} {ms:>9}  {notes}"


class Progress:
    """Prints one row per step as the child reports it."""

    def __init__(self, console: Console, title: str | None = None) -> None:
        self.console = console
        self.title = title
        self.prev_live: int | None = None
        self.header_done = False

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "start":
            where = event.get("device_name") if event.get("device", "").startswith("cuda") else "cpu"
            self.console.print(
                f"[dim]torch {event.get('torch')} · python {event.get('python')} · device {event.get('device')}"
                + (f" ({escape(str(where))})" if where != "cpu" else f" · {event.get('threads')} thread(s)")
                + "[/dim]"
            )
        elif kind == "ready":
            self.prev_live = event.get("live_before_bytes")
            self.console.print(
                f"[dim]{event.get('ready_label', 'entry ready')} in {event['setup_s']:.1f}s · "
                f"{event['modules_hooked']} module(s) hooked · "
                f"live tensors before step 1: {fmt_bytes(event['live_before_bytes'])}[/dim]"
            )
        elif kind == "step":
            if not self.header_done:
                self.header_done = True
                head = ROW.format(step="step", loss="loss", gnorm="grad norm", peak="peak", live="live",
                                  dlive="Δlive", ms="time ms", notes="")
                self.console.print(Text(head.rstrip(), style="bold"))
            live = event.get("live_end_bytes")
            cuda = event.get("cuda")
            peak = cuda["max_allocated_bytes"] if cuda else event.get("peak_bytes")
            end = cuda["allocated_end_bytes"] if cuda else live
            dlive = None if self.prev_live is None or end is None or cuda else end - self.prev_live  # None: not measured
            self.prev_live = end
            notes = []
            if event.get("warmup"):
                notes.append("warm-up")
            if event.get("exact") is False:
                notes.append("sampled")
            loss = event.get("loss")
            if loss is not None and not _finite(loss):
                notes.append(f"[red]loss {fmt_num(loss)}[/red]")
            if event.get("nonfinite_grads_count"):
                notes.append(f"[red]{event['nonfinite_grads_count']} non-finite grads[/red]")
            bad = event.get("nonfinite_module")
            if bad:
                notes.append(f"[red]{bad['value']} first in {escape(bad['module'])}[/red]")
            if cuda and cuda.get("ooms"):
                notes.append(f"[red]{cuda['ooms']} OOMs[/red]")
            row = ROW.format(
                step=event["step"], loss=fmt_num(loss), gnorm=fmt_num(event.get("grad_norm")),
                peak=fmt_bytes(peak), live=fmt_bytes(end), dlive=fmt_bytes(dlive, signed=True) if dlive is not None else "-",
                ms=f"{event['time_ms']:.1f}", notes=" ".join(notes),
            )
            self.console.print(row.rstrip(), highlight=False)


def _finite(x: Any) -> bool:
    import math

    return isinstance(x, (int, float)) and math.isfinite(x)


def _what_runs(settings: Settings) -> str:
    if settings.run:
        import shlex

        return f"command {escape(shlex.join(settings.run))}"
    return f"entry {escape(str(settings.entry))}"


def print_header(console: Console, settings: Settings, project: str, label: str | None = None) -> None:
    budgets = ", ".join(f"{k}={v:g}" for k, v in settings.budgets.items()) or "none"
    title = f"stabfix verify {escape(project)}" + (f" [dim]({escape(label)})[/dim]" if label else "")
    console.print(f"[bold]{title}[/bold]")
    console.print(
        f"[dim]{_what_runs(settings)} · steps {settings.steps} (warm-up {settings.warmup}) · "
        f"seed {settings.seed} · device {settings.device} · timeout {settings.timeout:g}s · budgets {escape(budgets)}[/dim]"
    )


def print_error(console: Console, report: dict[str, Any]) -> None:
    error = report["error"]
    console.print(f"[bold red]✗ could not run:[/bold red] {escape(error['message'])}")
    tb = error.get("traceback")
    if tb:
        title = "stack of your code" if error.get("kind") == "timeout" else "traceback from your code"
        console.print(Rule(title, style="red"))
        console.print(Text(tb), highlight=False)
        console.print(Rule(style="red"))
    elif error.get("kind") in ("crash", "no_steps") and report.get("output_tail"):
        console.print(Rule("last output of your code", style="red"))
        console.print(Text(report["output_tail"]), highlight=False)
        console.print(Rule(style="red"))
    if error.get("snapshot"):
        console.print(f"CUDA memory snapshot written to {escape(error['snapshot'])} "
                      "(open it at https://pytorch.org/memory_viz)")


def summary_table(report: dict[str, Any]) -> Table:
    s = report["summary"]
    source = report["memory_source"]
    cuda = source == "cuda allocator"
    table = Table(title=f"summary (memory: {source})", title_justify="left", show_header=True,
                  header_style="bold")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("notes", overflow="fold")
    dispatch = " (live tensors, dispatch)" if cuda else ""
    steps = report.get("steps") or []

    def row(metric: str, value: str, notes: str = "") -> None:
        table.add_row(metric, value, notes)

    last = steps[-1]["step"] if steps else "?"
    row("loss", f"{fmt_num(s.get('loss_first'))} → {fmt_num(s.get('loss_last'))}", f"step 1 → step {last}")
    gmax_step = s.get("grad_norm_max_step")
    top = s.get("grad_norm_top") or []
    gmax = s.get("grad_norm_max")
    finite_max = isinstance(gmax, (int, float)) and gmax == gmax and abs(gmax) != float("inf")
    where = ""
    if gmax_step:
        top_text = f"top: {top[0][0]} {fmt_num(top[0][1])}" if top else ""
        if finite_max:
            where = f"step {gmax_step}" + (f"; {top_text}" if top_text else "")
        else:
            largest = next((st["grad_norm"] for st in steps if st["step"] == gmax_step), None)
            where = f"largest finite {fmt_num(largest)} at step {gmax_step}" + (f" ({top_text})" if top_text else "")
    row("grad norm (max)", fmt_num(gmax), where)
    row("grad norm (median)", fmt_num(s.get("grad_norm_median")), "global L2 norm, before optimizer.step()")
    if s.get("clip_seen_steps"):
        row("  before clipping (max)", fmt_num(s.get("grad_norm_before_clip_max")),
            f"step {s.get('grad_norm_before_clip_step')}; clipped to {fmt_num(s.get('clip_max_norm'))} "
            f"on {s.get('clipped_steps')} of {s.get('clip_seen_steps')} step(s)")
    row("peak memory", fmt_bytes(s.get('peak_memory_bytes')),
        f"step {s.get('peak_step')}" + (f", in {s['peak_phase']}" if s.get("peak_phase") else ""))
    if cuda:
        row("peak reserved", fmt_bytes(s.get('peak_reserved_bytes')), "cached segments")
        row("alloc retries / OOMs", f"{s.get('alloc_retries')} / {s.get('ooms')}", "")
        row("peak live tensors", fmt_bytes(s.get('live_peak_bytes')), dispatch.strip(" ()"))
    for phase in ("forward", "backward", "optimizer"):
        value = s.get(f"peak_{phase}_bytes")
        row(f"  peak in {phase}", fmt_bytes(value) if value else "-", dispatch.strip(" ()"))
    others = "".join(f"; {h['holder']} {fmt_bytes(h['bytes'])}" + (f" ({h['type']} module)" if h.get("type") else "")
                     for h in s.get("live_before_holders") or [])
    row("live before step 1", fmt_bytes(s.get('live_before_bytes')),
        f"model parameters+buffers {fmt_bytes(s.get('model_state_bytes'))}{others}{dispatch}")
    row("live after last step", fmt_bytes(s.get('live_end_bytes')), dispatch.strip(" ()"))
    growth = s.get("growth_bytes_per_step")
    row("memory growth", f"{fmt_bytes(growth, signed=True)}/step" if growth is not None else "-",
        "least-squares slope of live memory after warm-up")
    trend = s.get("step_time_trend_pct_per_step")
    judged = s.get("step_time_trend_judged", True)  # reports from before the noise test: as they were
    if trend is not None and judged:
        p = s.get("step_time_trend_p")
        trend_text = f"; trend {trend:+.1f}%/step" + (f" (beyond the noise, rank test p={p:.3f})" if p is not None else "")
    elif s.get("step_time_trend_note"):
        trend_text = f"; no trend judged: {s['step_time_trend_note']}"
    else:
        trend_text = ""
    row("step time (median)", f"{s.get('step_time_median_ms', 0):.1f} ms",
        f"after warm-up; min {s.get('step_time_min_ms', 0):.1f} ms" + trend_text)
    if s.get("trainable_params") is not None:
        row("trainable params", f"{s['trainable_params']:,}", f"of {s['total_params']:,} (shared counted once)")
    return table


def print_sparklines(console: Console, report: dict[str, Any]) -> None:
    """One line per series under the summary: live memory and grad norm, step by step."""
    from stabfix.verify.sparkline import BLOCKS, can_encode, summary_lines

    lines = summary_lines(report, ascii_only=not can_encode(console.encoding, BLOCKS + "…"))
    width = max((len(name) for name, _, _ in lines), default=0)
    for name, line, text in lines:
        console.print(Text.assemble((f"{name:<{width}}  ", "bold"), (line, "cyan"), (f"  {text}", "dim")))


def print_report(console: Console, report: dict[str, Any]) -> None:
    if report.get("error"):
        print_error(console, report)
        return
    console.print()
    console.print(summary_table(report))
    print_sparklines(console, report)
    survivors = [g for g in report.get("survivors", []) if g.get("steps", 0) >= 2]
    if survivors:
        table = Table(title="tensors that survive steps (created after warm-up, still alive)",
                      title_justify="left", header_style="bold")
        table.add_column("size", justify="right")
        table.add_column("count", justify="right")
        table.add_column("created by")
        table.add_column("at", overflow="fold")
        table.add_column("held by", overflow="fold")
        for g in survivors[:5]:
            where = f"{g['file']}:{g['line']}" if g.get("file") else "-"
            held = ", ".join(g["holders"][:2]) if g.get("holders") else (
                "?" if g.get("python_refs") else "autograd graph / C++ (no Python reference)")
            table.add_row(fmt_bytes(g["bytes"]), str(g["count"]), f"{g['op']} ({g['phase']})", escape(where),
                          escape(held))
        console.print(table)
    console.print()
    for c in report["checks"]:
        mark = {"pass": "[green]✓[/green]", "fail": "[bold red]✗[/bold red]", "warn": "[yellow]![/yellow]"}[c["status"]]
        console.print(f"{mark} {escape(c['name'])}: {escape(c['message'])}", highlight=False)
    if report.get("snapshot"):
        console.print(f"CUDA memory snapshot: {escape(report['snapshot'])} (https://pytorch.org/memory_viz)")
    fails = [c for c in report["checks"] if c["status"] == "fail"]
    console.print()
    if fails:
        console.print(f"[bold red]verify failed[/bold red]: {len(fails)} check(s) failed "
                      f"({', '.join(c['name'] for c in fails)})")
    else:
        console.print("[bold green]verify passed[/bold green]: healthy and within budgets")
