"""`stabfix verify --estimate`: will the full-size training step fit on the GPU? (parent side, no torch)

Runs `stabfix.verify.estimate_child` through verify's runner (same subprocess, timeout and one-line
error discipline), turns what it measured into the `estimate` report and prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stabfix import exit_codes
from stabfix.verify.estimate_steps import ALLOCATOR_OVERHEAD, CONTEXT_BYTES, WORKSPACE_BYTES, margin_for
from stabfix.verify.metrics import fmt_bytes
from stabfix.verify.settings import EstimateSettings, Settings

CHILD = "stabfix.verify.estimate_child"


def run_estimate(settings: Settings, est: EstimateSettings, project: Path, console: Console) -> dict[str, Any]:
    """Run the child and build the report: {"estimate": {...}, "error": ..., "exit_code": int}."""
    from stabfix.verify.runner import run_child

    def progress(event: dict[str, Any]) -> None:
        if event.get("type") == "start":
            console.print(f"[dim]torch {event.get('torch')} · python {event.get('python')} · fake tensors "
                          "(no memory allocated)[/dim]")
        elif event.get("type") == "ready":
            console.print(f"[dim]models built on meta → fake in {event['setup_s']:.1f}s · optimizers: "
                          f"{', '.join(event.get('optimizers') or []) or 'none'}[/dim]")
        elif event.get("type") == "variants":
            console.print("[dim]over the device memory: estimating what would make it fit …[/dim]")

    run = run_child(settings, project, progress, child_module=CHILD, extra={"estimate": est.to_dict()})
    if run.error is not None or run.done is None:
        error = run.error or {"kind": "crash", "message": "the estimate child stopped without a result"}
        return {"estimate": None, "error": error, "output_tail": run.output_tail, "exit_code": exit_codes.ERROR}
    raw = run.done["estimate"]
    return {"estimate": build_report(raw, est), "error": None, "exit_code": 0, "raw": raw}


def build_report(raw: dict[str, Any], est: EstimateSettings) -> dict[str, Any]:
    tensors = int(raw["tensor_peak_bytes"])
    margin = margin_for(tensors, est.margin_bytes)
    bd = raw.get("breakdown") or {}
    breakdown = {k: int(bd.get(k, 0)) for k in ("parameters", "gradients", "optimizer_state", "activations")}
    breakdown["non_tensor_margin"] = margin
    peak = tensors + margin
    memory = est.device_memory_bytes
    variants, skipped = [], []
    for v in raw.get("variants") or []:
        if v.get("skipped"):  # not measured: listed apart, so every variant row has a real peak
            skipped.append({"name": v["name"], "reason": v["skipped"]})
            continue
        t = int(v["tensor_peak_bytes"])
        peak_v = t + margin_for(t, est.margin_bytes)
        variants.append({"name": v["name"], "peak_bytes": peak_v, "computed": bool(v.get("computed")),
                         "fits": None if memory is None else peak_v <= memory, "detail": v.get("detail", "")})
    report: dict[str, Any] = {
        "label": raw.get("label", "estimate(fake)"),
        "peak_bytes": peak,
        "peak_phase": raw.get("peak_phase"),
        "breakdown": breakdown,
        "device_memory_bytes": memory,
        "fits": None if memory is None else peak <= memory,
        "variants": variants,
        "largest": raw.get("largest") or [],
        "assumptions": assumptions(raw, est),
        "variants_skipped": skipped,
        # extra detail (not drawn by the plot)
        "tensor_peak_bytes": tensors,
        "gpu": est.gpu,
        "entry": raw.get("entry"),
        "peak_step": raw.get("peak_step"),
        "cold_peak_bytes": (raw.get("cold_step") or {}).get("peak_bytes"),
        "steady_peak_bytes": (raw.get("steady_step") or {}).get("peak_bytes"),
        "phase_peak_bytes": raw.get("phase_peak_bytes") or (raw.get("steady_step") or {}).get("phase_peak_bytes"),
        "params": raw.get("params"),
        "seconds": round(float(raw.get("total_s", 0.0)), 2),
        "child_max_rss_bytes": raw.get("child_max_rss_bytes"),
    }
    if raw.get("fake_error"):
        report["fake_error"] = {k: raw["fake_error"].get(k) for k in ("message", "op", "where")}
        report["fallback"] = raw.get("fallback")
        report["points"] = raw.get("points")
    return report


def assumptions(raw: dict[str, Any], est: EstimateSettings) -> list[str]:
    out = []
    if raw.get("label") == "estimate(extrapolated)":
        out.append(f"fake tensors could not run the step ({raw['fake_error']['message']}); "
                   f"{raw.get('fallback')}")
    else:
        out.append("parameters built on the meta device, then fake CPU tensors (tied weights stay tied); a cold "
                   "and a steady step counted by verify's live-tensor tracker; the peak is the larger of the two")
    if est.margin_bytes is None:
        out.append(f"non-tensor margin = CUDA context {fmt_bytes(CONTEXT_BYTES)} + cuBLAS/cuDNN workspaces "
                   f"{fmt_bytes(WORKSPACE_BYTES)} + {ALLOCATOR_OVERHEAD:.0%} of the tensor peak for the caching "
                   "allocator's rounding and fragmentation")
    else:
        out.append(f"non-tensor margin = verify.estimate.margin_gb {fmt_bytes(est.margin_bytes)} + "
                   f"{ALLOCATOR_OVERHEAD:.0%} of the tensor peak (allocator rounding and fragmentation)")
    if est.kernels == "cuda":
        switched = raw.get("optimizers_switched") or []
        if switched:
            out.append(f"optimizer as CUDA runs it: {', '.join(switched)} with foreach=True (CUDA's default; the "
                       "CPU default is a per-parameter loop)")
        if raw.get("fused_requested"):
            out.append("fused optimizer kept as the code asks")
        if raw.get("sdpa_calls"):
            out.append(f"scaled_dot_product_attention ({raw['sdpa_calls']} call(s) per step) counted as a flash/"
                       "memory-efficient kernel: saves q, k, v, the output and a float32 logsumexp; no L×L matrix "
                       "and no dropout mask")
        out.append("attention written by hand (matmul + softmax) is counted as written, as CUDA runs it too")
    else:
        out.append("kernels as the CPU runs them (verify.estimate.kernels: cpu): comparable with a real CPU run")
    if raw.get("scalar_reads"):
        out.append(f"{raw['scalar_reads']} value read(s) per step (.item(), bool(tensor), .tolist(); first at "
                   f"{raw.get('scalar_site', '?')}) have no value under fake tensors: read as False for flags and "
                   "1 for numbers, so data-dependent branches take that path")
    if raw.get("unpatched_references"):
        out.append(f"{raw['unpatched_references']} reference(s) to meta tensors inside tuples could not be replaced")
    if raw.get("variants"):
        out.append("the bf16 autocast variant uses CPU autocast's op lists, which cast fewer ops than CUDA's")
    out.append("every number is a prediction for one CUDA device, labelled " + raw.get("label", "estimate(fake)"))
    return out


def print_estimate(console: Console, result: dict[str, Any], title: str) -> None:
    rep = result.get("estimate")
    if rep is None:
        err = result.get("error") or {}
        console.print(f"[red]✗ estimate failed:[/red] {escape(str(err.get('message')))}")
        if err.get("traceback"):
            console.print(escape(str(err["traceback"])))
        elif result.get("output_tail"):
            console.print(f"[dim]{escape(result['output_tail'])}[/dim]")
        return
    label = rep["label"]
    if rep.get("fake_error"):
        fe = rep["fake_error"]
        console.print(f"[yellow]![/yellow] fake tensors could not run {escape(str(fe.get('op') or 'the step'))}"
                      + (f" at {escape(str(fe['where']))}" if fe.get("where") else "")
                      + f"; fell back to {escape(str(rep.get('fallback')))}")
    params = rep.get("params") or {}
    head = f"{label} · {escape(title)}"
    if params:
        head += f" · {params.get('total', 0):,} parameters ({params.get('trainable', 0):,} trainable)"
    table = Table(title=head, title_justify="left", header_style="bold")
    table.add_column("part")
    table.add_column(label, justify="right")
    table.add_column("share", justify="right")
    total = max(1, rep["peak_bytes"])
    for key, name in (("parameters", "parameters (+buffers)"), ("gradients", "gradients"),
                      ("optimizer_state", "optimizer state"), ("activations", "activations + temporaries"),
                      ("non_tensor_margin", "non-tensor margin")):
        value = rep["breakdown"][key]
        table.add_row(name, fmt_bytes(value), f"{value / total:.0%}")
    where = ", ".join(part for part in (f"in {rep['peak_phase']}" if rep.get("peak_phase") else None,
                                        f"{rep['peak_step']} step" if rep.get("peak_step") else None) if part)
    table.add_row("[bold]predicted peak[/bold]" + (f" ({where})" if where else ""),
                  f"[bold]{fmt_bytes(rep['peak_bytes'])}[/bold]", "")
    console.print(table)
    if rep["largest"]:
        big = Table(title=f"largest tensors at the peak ({label})", title_justify="left", header_style="bold")
        for col, just in (("bytes", "right"), ("shape", "left"), ("dtype", "left"), ("made by", "left")):
            big.add_column(col, justify=just)  # type: ignore[arg-type]
        for row in rep["largest"]:
            big.add_row(fmt_bytes(row["bytes"]), "×".join(str(d) for d in row["shape"]) or "()", row["dtype"],
                        escape(str(row["module"])))
        console.print(big)
    memory = rep["device_memory_bytes"]
    if memory is not None:
        card = f"{rep['gpu']} ({fmt_bytes(memory)})" if rep.get("gpu") else fmt_bytes(memory)
        if rep["fits"]:
            console.print(f"[green]✓ fits[/green] on {escape(card)}: {label} peak {fmt_bytes(rep['peak_bytes'])}, "
                          f"{fmt_bytes(memory - rep['peak_bytes'])} to spare")
        else:
            console.print(f"[red]✗ does not fit[/red] on {escape(card)}: {label} peak {fmt_bytes(rep['peak_bytes'])} "
                          f"is {fmt_bytes(rep['peak_bytes'] - memory)} over")
    if rep["variants"] or rep.get("variants_skipped"):
        vt = Table(title="what would make it fit", title_justify="left", header_style="bold")
        vt.add_column("change")
        vt.add_column("peak", justify="right")
        vt.add_column("fits", justify="center")
        vt.add_column("how")
        for v in rep["variants"]:
            fits = "" if v.get("fits") is None else ("[green]yes[/green]" if v["fits"] else "[red]no[/red]")
            tag = "computed" if v["computed"] else label
            vt.add_row(v["name"], f"{fmt_bytes(v['peak_bytes'])} [dim]{tag}[/dim]", fits, escape(v.get("detail", "")))
        for v in rep.get("variants_skipped") or []:
            vt.add_row(v["name"], "—", "", f"[dim]{escape(v['reason'])}[/dim]")
        console.print(vt)
    console.print("[dim]assumptions:[/dim]")
    for a in rep["assumptions"]:
        console.print(f"[dim]  · {escape(a)}[/dim]")
    console.print(f"[dim]estimated in {rep['seconds']:.1f}s[/dim]")


def exit_code(result: dict[str, Any]) -> int:
    rep = result.get("estimate")
    if rep is None:
        return exit_codes.ERROR
    return 1 if rep["fits"] is False else 0
