"""Turn the child's raw measurements into a report: summary metrics, health checks, budget verdicts,
and the exit code. Pure Python (no torch), so it is cheap to import and easy to test.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from stabfix import exit_codes
from stabfix.verify.runner import RunResult
from stabfix.verify.settings import MB, Settings
from stabfix.verify.timing import MIN_SAMPLES, shift, timed_steps

REPORT_VERSION = 1
SOURCE_DISPATCH = "live tensors (dispatch)"
SOURCE_CUDA = "cuda allocator"
TIME_TREND_WARN = 1.5  # median step time of the second half / first half above this: warning
TIME_TREND_MIN_MS = 5.0  # ... and at least this many ms slower
GROWTH_MIN_DELTAS = 2  # step-to-step changes after warm-up needed to call growth steady (3 steps)


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of y over x; None with fewer than 2 points."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def fmt_num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, float) and math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if isinstance(x, int):
        return f"{x:,}"
    ax = abs(x)
    if ax != 0 and (ax >= 1e5 or ax < 1e-3):
        return f"{x:.2e}"
    return f"{x:.4g}"


def fmt_bytes(nbytes: Any, signed: bool = False) -> str:
    """A size with the unit that shows it: `1.28 MiB`, `+64.0 KiB`, `+12 B` (a few bytes a step is
    not `+0.00 MiB`)."""
    if nbytes is None:
        return "-"
    if isinstance(nbytes, float) and not math.isfinite(nbytes):
        return fmt_num(nbytes)
    sign = "-" if nbytes < 0 else ("+" if signed else "")
    size = abs(nbytes)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{sign}{size / scale:.2f} {unit}"
    return f"{sign}{size:.3g} B" if size != int(size) else f"{sign}{int(size)} B"


def _check(checks: list[dict[str, Any]], name: str, status: str, message: str, **extra: Any) -> None:
    checks.append({"name": name, "status": status, "message": message, **extra})


def _accumulating(survivors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in survivors if s.get("steps", 0) >= 2]


def _holder_text(group: dict[str, Any]) -> str:
    where = f"{group['file']}:{group['line']}" if group.get("file") else "unknown site"
    if group.get("holders"):
        held = "held by " + ", ".join(group["holders"][:2])
    elif group.get("python_refs"):
        held = "holder not found"
    else:
        held = "no Python reference (kept alive by an autograd graph or C++ code)"
    return f"{held}; created by {group['op']} at {where}"


def _names(names: list[str]) -> str:
    more = len(names) - 3
    return ", ".join(names[:3]) + (f" and {more} more" if more > 0 else "")


def _optimizer_coverage(checks: list[dict[str, Any]], params: dict[str, Any]) -> None:
    """Trainable parameters in no optimizer: a warning when they get gradients (computed, never
    applied); when they never get one (a target network, an EMA copy) they are frozen in effect,
    which is said, not warned about."""
    if not params.get("trainable_not_in_optimizer"):
        return
    if "not_in_optimizer_with_grad" not in params:  # a report from before the split: all one number
        _check(checks, "optimizer coverage", "warn",
               f"{params['trainable_not_in_optimizer']:,} trainable parameter values are in no optimizer")
        return
    modules = params.get("not_in_optimizer_modules") or {}
    with_grad, without_grad = params["not_in_optimizer_with_grad"], params["not_in_optimizer_without_grad"]
    if with_grad:
        _check(checks, "optimizer coverage", "warn",
               f"{with_grad:,} trainable parameter values get gradients but are in no optimizer, so they are "
               f"never updated: {_names(modules.get('with_grad') or [])}",
               modules=modules.get("with_grad") or [], value=with_grad)
    if without_grad:
        _check(checks, "optimizer coverage", "pass",
               f"{without_grad:,} parameter values require grad but get no gradient and are in no optimizer "
               f"(frozen in effect, e.g. a target network or an EMA copy): {_names(modules.get('without_grad') or [])}",
               modules=modules.get("without_grad") or [], value=without_grad)


def _is_exact(step: dict[str, Any]) -> bool:
    """Steps of reports written before sampled steps existed have no `exact` field: all were exact."""
    return step.get("exact", True) is not False


def analyze(settings: Settings, run: RunResult, project: str) -> dict[str, Any]:
    steps = run.steps
    use_cuda = bool(steps and steps[0].get("cuda"))
    memory_source = SOURCE_CUDA if use_cuda else SOURCE_DISPATCH
    report: dict[str, Any] = {
        "stabfix_verify_report": REPORT_VERSION,
        "project": project,
        "settings": settings.to_dict(),
        "environment": {k: v for k, v in (run.start or {}).items() if k not in ("type", "pid")},
        "memory_source": memory_source,
        "steps": [{k: v for k, v in s.items() if k != "type"} for s in steps],
        "survivors": (run.done or {}).get("survivors", []),
        "params": (run.done or {}).get("params"),
        "error": run.error,
        "output_tail": run.output_tail if run.error else "",
        "snapshot": (run.done or {}).get("snapshot") or (run.error or {}).get("snapshot"),
    }
    checks: list[dict[str, Any]] = []
    summary = summarize(settings, run, use_cuda)
    report["summary"] = summary
    if run.error is not None:
        report["checks"] = checks
        report["status"] = "error"
        report["exit_code"] = exit_codes.ERROR
        return report

    budgets = settings.budgets
    post = [s for s in steps if not s["warmup"]]

    # -- health ----------------------------------------------------------------------------------
    bad_loss = next((s for s in steps if s.get("loss") is not None and not _finite(s["loss"])), None)
    if bad_loss is not None:
        hint = ""
        if bad_loss.get("modules_checked") and not bad_loss.get("nonfinite_module"):
            hint = (" while every module output was finite (the non-finite value comes from code outside "
                    "the modules, e.g. the loss)")
        _check(checks, "loss", "fail", f"loss is {fmt_num(bad_loss['loss'])} at step {bad_loss['step']}{hint}",
               step=bad_loss["step"])
    elif all(s.get("loss") is None for s in steps):
        _check(checks, "loss", "warn", "the step returned no loss; loss finiteness was not checked")
    else:
        _check(checks, "loss", "pass", "loss finite at every step")

    bad_grad = next((s for s in steps if s.get("nonfinite_grads_count")), None)
    stepped = any(s.get("optimizer_steps") for s in steps)
    if bad_grad is not None:
        names = bad_grad["nonfinite_grads"]
        more = bad_grad["nonfinite_grads_count"] - len(names[:3])
        listed = ", ".join(names[:3]) + (f" and {more} more" if more > 0 else "")
        prev = [s for s in steps if s["step"] < bad_grad["step"] and _finite(s.get("grad_norm"))]
        rise = ""
        if prev:
            last = prev[-1]
            top = last["top_params"][0][0] if last.get("top_params") else None
            rise = f"; grad norm was {fmt_num(last['grad_norm'])} at step {last['step']}" + (
                f" (top: {top})" if top else "")
        _check(checks, "gradients", "fail",
               f"non-finite gradients at step {bad_grad['step']} in {bad_grad['nonfinite_grads_count']} "
               f"parameter(s): {listed}{rise}", step=bad_grad["step"])
    elif not stepped:
        _check(checks, "gradients", "warn",
               "no optimizer.step() ran during the steps; gradients were not checked")
    else:
        _check(checks, "gradients", "pass", "gradients finite at every optimizer step")

    first_bad = (run.done or {}).get("first_nonfinite_module")
    if first_bad:
        if first_bad.get("input_nonfinite"):
            how = ("; its input was already non-finite and no module made it: it comes from the data or the "
                   "step's own code outside every module")
        elif "input_nonfinite" in first_bad:
            how = f"; its own computation made it (its inputs had no {first_bad['value']})"
        else:  # a report from before inputs were checked
            how = ""
        _check(checks, "numerics", "fail",
               f"first non-finite output ({first_bad['value']}): module {first_bad['module']} "
               f"({first_bad['type']}) at step {first_bad['step']}{how}", module=first_bad["module"],
               step=first_bad["step"], input_nonfinite=first_bad.get("input_nonfinite"))
    else:
        benign = (run.done or {}).get("benign_nonfinite_modules") or []
        if benign:
            first = benign[0]
            more = f" (and {len(benign) - 1} more)" if len(benign) > 1 else ""
            _check(checks, "numerics", "warn",
                   f"module {first['module']} ({first['type']}) outputs {first['value']}{more} while loss and "
                   f"gradients stay finite (a deliberate mask?)")
        else:
            _check(checks, "numerics", "pass", "every module output finite")

    none_step = next((s for s in steps if s.get("none_grads_count")), None)
    if none_step is not None:
        names = none_step["none_grads"]
        more = none_step["none_grads_count"] - len(names[:3])
        _check(checks, "unused parameters", "warn",
               f"{none_step['none_grads_count']} parameter(s) require grad but had no gradient at the "
               f"optimizer step (step {none_step['step']}): {', '.join(names[:3])}"
               + (f" and {more} more" if more > 0 else ""))
    params = (run.done or {}).get("params") or {}
    _optimizer_coverage(checks, params)

    # -- growth ------------------------------------------------------------------------------------
    growth = summary.get("growth_bytes_per_step")
    acc = _accumulating((run.done or {}).get("survivors", []))
    holder = f" — {_holder_text(acc[0])}" if acc else ""
    series = [s["live_end_bytes"] if not use_cuda else s["cuda"]["allocated_end_bytes"] for s in post]
    deltas = [b - a for a, b in zip(series, series[1:])]
    steady = len(deltas) >= GROWTH_MIN_DELTAS and all(d > 0 for d in deltas)
    window = f"steps {post[0]['step']}-{post[-1]['step']}" if post else ""
    if "memory_growth_mb_per_step" in budgets:
        limit = budgets["memory_growth_mb_per_step"]
        if growth is not None and growth / MB > limit:
            _check(checks, "memory growth", "fail",
                   f"memory_growth {fmt_bytes(growth, signed=True)}/step > budget {limit:g} MiB/step ({window}){holder}",
                   budget=limit, value=growth / MB)
        else:
            _check(checks, "memory growth", "pass",
                   f"memory growth {fmt_bytes(growth or 0, signed=True)}/step within budget {limit:g} MiB/step")
    elif steady and growth is not None and growth > 0:
        _check(checks, "memory growth", "fail",
               f"memory grows every step after warm-up: {fmt_bytes(growth, signed=True)}/step ({window}){holder}",
               value=growth / MB)
    elif len(deltas) < GROWTH_MIN_DELTAS:
        # too few steps after warm-up to tell steady growth from a one-off allocation: growth that was
        # measured fails (nothing can clear it), none measured is said to be unjudged, never "no growth"
        enough = GROWTH_MIN_DELTAS + 1
        need = f"run at least {enough} steps after warm-up (--steps {len(steps) - len(post) + enough}) to judge it"
        measured = growth if len(post) >= 2 else None  # with fewer, the summary's slope spans warm-up
        kept = (run.done or {}).get("survivors") or []  # created in one step after warm-up: all there is
        holder = holder or (f" — {_holder_text(kept[0])}" if kept else "")
        if measured is not None and measured > 0:
            _check(checks, "memory growth", "fail",
                   f"memory grew {fmt_bytes(growth, signed=True)}/step over only {len(post)} step(s) after warm-up "
                   f"({window}), too few to tell steady growth from a one-off allocation; {need}{holder}",
                   value=growth / MB, judged=False)
        else:
            _check(checks, "memory growth", "warn",
                   f"growth not judged: only {len(post)} step(s) after warm-up"
                   + (f" ({window}, slope {fmt_bytes(measured, signed=True)}/step)" if measured is not None else "")
                   + f"; {need}", judged=False)
    else:
        _check(checks, "memory growth", "pass",
               "no steady growth after warm-up" + (f" (slope {fmt_bytes(growth, signed=True)}/step)" if growth else ""))

    # -- budgets -------------------------------------------------------------------------------
    if "peak_memory_mb" in budgets:
        limit = budgets["peak_memory_mb"]
        peak = summary["peak_memory_bytes"]
        if peak is not None and peak / MB > limit:
            s = summary.get("peak_step")
            phase = summary.get("peak_phase")
            _check(checks, "peak memory", "fail",
                   f"peak_memory {fmt_bytes(peak)} > budget {limit:g} MiB (step {s}"
                   + (f", {phase}" if phase else "") + f"; {memory_source})", budget=limit, value=peak / MB)
        else:
            _check(checks, "peak memory", "pass", f"peak memory within budget {limit:g} MiB")
    if "grad_norm" in budgets:
        limit = budgets["grad_norm"]
        over = next((s for s in steps if s.get("grad_norm") is not None
                     and (not _finite(s["grad_norm"]) or s["grad_norm"] > limit)), None)
        if over is not None:
            top = over["top_params"][0][0] if over.get("top_params") else None
            if top is None and over.get("nonfinite_grads"):
                top = over["nonfinite_grads"][0]
            _check(checks, "grad norm", "fail",
                   f"grad_norm {fmt_num(over['grad_norm'])} > budget {limit:g} (step {over['step']}"
                   + (f", top: {top}" if top else "") + ")", budget=limit, value=over["grad_norm"],
                   step=over["step"], top=top)
        elif stepped:
            _check(checks, "grad norm", "pass", f"grad norm within budget {limit:g}")
    if "step_time_ms" in budgets:
        limit = budgets["step_time_ms"]
        median = summary.get("step_time_median_ms")
        if median is not None and median > limit:
            _check(checks, "step time", "fail", f"step_time {median:.1f} ms (median) > budget {limit:g} ms",
                   budget=limit, value=median)
        else:
            _check(checks, "step time", "pass", f"step time within budget {limit:g} ms")
    if "trainable_params" in budgets:
        limit = budgets["trainable_params"]
        trainable = params.get("trainable")
        if trainable is not None and trainable > limit:
            _check(checks, "trainable params", "fail",
                   f"trainable_params {trainable:,} > budget {int(limit):,} (total {params['total']:,}, "
                   f"frozen {params['frozen']:,})", budget=limit, value=trainable)
        else:
            _check(checks, "trainable params", "pass", f"trainable parameters within budget {int(limit):,}")

    trend = summary.get("step_time_growth")
    if trend is not None and trend > TIME_TREND_WARN:
        _check(checks, "step time trend", "warn",
               f"step time grows: the second half of the steps is {trend:.1f}x slower than the first half "
               f"(beyond the noise of this run: rank test p={summary.get('step_time_trend_p') or 0:.3f})")

    report["checks"] = checks
    failed = any(c["status"] == "fail" for c in checks)
    report["status"] = "failed" if failed else "ok"
    report["exit_code"] = exit_codes.FINDINGS if failed else exit_codes.OK
    return report


def summarize(settings: Settings, run: RunResult, use_cuda: bool) -> dict[str, Any]:
    steps = run.steps
    post = [s for s in steps if not s["warmup"]] or steps
    out: dict[str, Any] = {"steps_run": len(steps)}
    if not steps:
        return out
    losses = [s.get("loss") for s in steps]
    out["loss_first"] = losses[0]
    out["loss_last"] = losses[-1]
    norms = [s.get("grad_norm") for s in steps if s.get("grad_norm") is not None]
    finite_norms = [n for n in norms if _finite(n)]
    out["grad_norm_max"] = max(norms, key=lambda n: (math.isnan(n), n)) if norms else None
    if norms and any(math.isnan(n) for n in norms):
        out["grad_norm_max"] = math.nan
    out["grad_norm_median"] = statistics.median(finite_norms) if finite_norms else None
    out["grad_norm_last"] = norms[-1] if norms else None
    max_step = max((s for s in steps if _finite(s.get("grad_norm"))), key=lambda s: s["grad_norm"], default=None)
    out["grad_norm_max_step"] = max_step["step"] if max_step else None
    out["grad_norm_top"] = max_step["top_params"] if max_step else []
    # `stabfix verify -- COMMAND`: the steps whose gradients were clipped before optimizer.step()
    clipped = [s for s in steps if s.get("grad_norm_before_clip") is not None]
    if clipped:
        largest = max(clipped, key=lambda s: (math.isnan(s["grad_norm_before_clip"]), s["grad_norm_before_clip"]))
        out["grad_norm_before_clip_max"] = largest["grad_norm_before_clip"]
        out["grad_norm_before_clip_step"] = largest["step"]
        out["clip_max_norm"] = largest["clip_max_norm"]
        out["clipped_steps"] = sum(1 for s in clipped if not s["grad_norm_before_clip"] <= s["clip_max_norm"])
        out["clip_seen_steps"] = len(clipped)

    # Peaks come from the exact steps (a sampled step's peak is not measured on the CPU).
    exact_steps = [s for s in steps if _is_exact(s)]
    out["exact_steps"] = [s["step"] for s in exact_steps]
    peak_step = max((s for s in exact_steps if s.get("peak_bytes") is not None), key=lambda s: s["peak_bytes"],
                    default=None)
    out["live_before_bytes"] = (run.ready or {}).get("live_before_bytes")
    out["model_state_bytes"] = (run.ready or {}).get("model_state_bytes")
    out["live_before_holders"] = (run.ready or {}).get("live_before_holders") or []
    out["live_peak_bytes"] = peak_step["peak_bytes"] if peak_step else None
    out["live_end_bytes"] = steps[-1]["live_end_bytes"]
    for phase in ("forward", "backward", "optimizer"):
        values = [s["phase_peak_bytes"].get(phase) for s in steps if (s.get("phase_peak_bytes") or {}).get(phase)]
        out[f"peak_{phase}_bytes"] = max(values) if values else None
    phases = peak_step["phase_peak_bytes"] if peak_step else {}
    out["peak_phase"] = max((p for p in phases if phases[p]), key=lambda p: phases[p], default=None)
    if use_cuda:
        cuda_peak = max(steps, key=lambda s: s["cuda"]["max_allocated_bytes"])
        out["peak_memory_bytes"] = cuda_peak["cuda"]["max_allocated_bytes"]
        out["peak_step"] = cuda_peak["step"]
        out["peak_phase"] = None
        out["peak_reserved_bytes"] = max(s["cuda"]["max_reserved_bytes"] for s in steps)
        out["allocated_end_bytes"] = steps[-1]["cuda"]["allocated_end_bytes"]
        out["alloc_retries"] = steps[-1]["cuda"]["alloc_retries"]
        out["ooms"] = steps[-1]["cuda"]["ooms"]
        series = [(s["step"], s["cuda"]["allocated_end_bytes"]) for s in post]
    else:
        out["peak_memory_bytes"] = peak_step["peak_bytes"] if peak_step else None
        out["peak_step"] = peak_step["step"] if peak_step else None
        series = [(s["step"], s["live_end_bytes"]) for s in post]
    # Live bytes at the step ends are counted on sampled steps too (at the step boundary), so growth
    # is judged on every step after warm-up, as when every step was exact.
    out["growth_bytes_per_step"] = slope(series)
    out["live_growth_bytes_per_step"] = slope([(s["step"], s["live_end_bytes"]) for s in post])

    # Step times: the sampled steps when there are some after warm-up (they run without the per-op
    # accounting, so they are the closest to the bare step); otherwise every step after warm-up.
    timed = timed_steps(steps)
    out["step_time_steps"] = "sampled" if any(not _is_exact(s) for s in timed) else "all"
    post = timed
    times = [s["time_ms"] for s in post]
    out["step_time_median_ms"] = statistics.median(times)
    out["step_time_min_ms"] = min(times)
    t_slope = slope([(s["step"], s["time_ms"]) for s in post])
    out["step_time_trend_pct_per_step"] = (
        100.0 * t_slope / out["step_time_median_ms"] if t_slope is not None and out["step_time_median_ms"] else None
    )
    # A trend is judged only from enough steps and beyond the noise measured in this run
    # (stabfix.verify.timing): the first half of the timed steps against the second half.
    half = len(times) // 2
    trend = shift(times[:half], times[-half:] if half else [])
    out["step_time_trend_judged"] = trend["judged"]
    if len(times) < 2 * MIN_SAMPLES:
        trend["reason"] = f"only {len(times)} timed steps after warm-up ({2 * MIN_SAMPLES} needed: more --steps)"
    out["step_time_trend_note"] = None if trend["judged"] else trend["reason"]
    out["step_time_noise_ms"] = trend.get("noise_ms")
    out["step_time_trend_p"] = trend.get("p")
    if trend["judged"] and trend["ratio"] is not None:
        first, last = trend["before_ms"], trend["after_ms"]
        # ratio, when the slowdown is also large in absolute terms (tiny steps are mostly noise)
        out["step_time_growth"] = trend["ratio"] if last - first >= TIME_TREND_MIN_MS else None
    else:
        out["step_time_growth"] = None
    params = (run.done or {}).get("params") or {}
    out["trainable_params"] = params.get("trainable")
    out["total_params"] = params.get("total")
    return out
