"""`stabfix verify --plot FILE`: the report as a picture (PNG or SVG, by the file's extension).

Panels per step: memory (peak, the forward/backward/optimizer peaks and live memory after the
step), gradient norm (log scale) and loss; warm-up steps shaded; with a baseline both runs on the
same axes (the baseline dashed); when the report has an `estimate`, its breakdown as a stacked bar
with the variants beside it and the device memory as a line.

Works on the report dict alone (`plot_report`), so anything that builds a report can draw it.
matplotlib is an optional extra (`pip install 'stabfix[plot]'`); it is imported only here, and
only the object-oriented Figure API with the Agg canvas is used (no pyplot, no display).
"""

from __future__ import annotations

import math
import os
import tempfile
import textwrap
from pathlib import Path
from typing import Any

FORMATS = {".png": "png", ".svg": "svg"}
INSTALL_HINT = "pip install 'stabfix[plot]'"

# series key -> (legend label, colour, line width, marker)
MEMORY_SERIES = [
    ("peak", "peak (whole step)", "#1f4e79", 3.4, "o"),
    ("forward", "peak in forward", "#5aa2d6", 1.1, "^"),
    ("backward", "peak in backward", "#e08a2c", 1.1, "v"),
    ("optimizer", "peak in optimizer", "#7a5195", 1.1, "s"),
    ("live", "live after step", "#2a9d3a", 2.2, "D"),
]
BREAKDOWN = [
    ("parameters", "parameters", "#1f4e79"),
    ("gradients", "gradients", "#5aa2d6"),
    ("optimizer_state", "optimizer state", "#7a5195"),
    ("activations", "activations", "#e08a2c"),
    ("non_tensor_margin", "non-tensor margin", "#b0b0b0"),
]
BAD = "#d62728"


class PlotError(Exception):
    """The picture cannot be made (bad extension, matplotlib missing, file not writable)."""


def path_problem(path: Path | str) -> str | None:
    """One line saying why FILE cannot be a plot (None: it can): only .png and .svg are written."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        shown = f"'{suffix}'" if suffix else "no extension"
        return f"--plot {path}: {shown} is not a picture format stabfix writes; use a .png or .svg file"
    return None


def matplotlib_problem() -> str | None:
    """One line saying why plots cannot be drawn here (None: they can)."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    except ImportError:
        return f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}"
    return None


# -- data --------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    """A plottable number: None (missing: not measured on that step) stays None; NaN/Inf stay as
    they are (they are marked, not drawn)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def memory_series(report: dict[str, Any]) -> dict[str, list[tuple[int, float | None]]]:
    """Per-step memory series in bytes, keyed as MEMORY_SERIES. On CUDA runs peak and live are the
    allocator's numbers (as in the summary); the phase peaks are always the dispatch counts."""
    cuda = report.get("memory_source") == "cuda allocator"
    out: dict[str, list[tuple[int, float | None]]] = {key: [] for key, *_ in MEMORY_SERIES}
    for s in report.get("steps") or []:
        step = s.get("step")
        if step is None:
            continue
        dev = s.get("cuda") or {}
        phases = s.get("phase_peak_bytes") or {}
        out["peak"].append((step, _num(dev.get("max_allocated_bytes") if cuda else s.get("peak_bytes"))))
        out["live"].append((step, _num(dev.get("allocated_end_bytes") if cuda else s.get("live_end_bytes"))))
        for phase in ("forward", "backward", "optimizer"):
            out[phase].append((step, _num(phases.get(phase)) or None))  # 0: the phase did not run
    return out


def value_series(report: dict[str, Any], key: str) -> list[tuple[int, float | None]]:
    return [(s["step"], _num(s.get(key))) for s in report.get("steps") or [] if s.get("step") is not None]


def warmup_spans(report: dict[str, Any]) -> list[tuple[float, float]]:
    """Contiguous warm-up step ranges as (x0, x1) for shading."""
    spans: list[tuple[float, float]] = []
    for s in report.get("steps") or []:
        if not s.get("warmup") or s.get("step") is None:
            continue
        if spans and spans[-1][1] == s["step"] - 0.5:
            spans[-1] = (spans[-1][0], s["step"] + 0.5)
        else:
            spans.append((s["step"] - 0.5, s["step"] + 0.5))
    return spans


def byte_unit(values: list[float]) -> tuple[str, float]:
    """The unit that shows these byte counts: MiB unless they are all below 1 MiB (KiB) or above
    10 GiB (GiB)."""
    top = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    if top >= 10 * (1 << 30):
        return "GiB", float(1 << 30)
    if top < (1 << 20):
        return "KiB", float(1 << 10)
    return "MiB", float(1 << 20)


def _fmt_size(nbytes: float, signed: bool = False) -> str:
    from stabfix.verify.metrics import fmt_bytes

    return fmt_bytes(round(nbytes), signed=signed)


# -- drawing -----------------------------------------------------------------------------------


def _line(ax, points, scale=1.0, *, color, lw, marker, style="-", label=None, positive=False):
    """Draw measured points joined by a line (steps with None are skipped, not drawn as 0)."""
    xs = [x for x, y in points if y is not None and math.isfinite(y) and (y > 0 or not positive)]
    ys = [y / scale for x, y in points if y is not None and math.isfinite(y) and (y > 0 or not positive)]
    if xs:
        wide = lw > 3  # the overall peak: a broad band under the phase peak it equals
        marker = marker if len(xs) <= 60 else None  # long runs: a marker per step would hide the line
        ax.plot(xs, ys, linestyle=style, color=color, linewidth=lw, marker=marker, markersize=7 if wide else 4,
                label=label, alpha=(0.45 if wide else 0.95) if style == "-" else (0.35 if wide else 0.75),
                zorder=1.5 if wide else 2)
    return len(xs)


def _mark_nonfinite(ax, points, *, style="-") -> int:
    """Mark NaN / ±Inf steps with a red cross at the top of the panel and a short label."""
    from matplotlib.transforms import blended_transform_factory

    trans = blended_transform_factory(ax.transData, ax.transAxes)
    n = 0
    for x, y in points:
        if y is None or math.isfinite(y):
            continue
        text = "NaN" if math.isnan(y) else ("+Inf" if y > 0 else "-Inf")
        ax.plot([x], [0.93], transform=trans, marker="X", markersize=9, color=BAD, linestyle="none",
                alpha=1.0 if style == "-" else 0.5, clip_on=False)
        ax.annotate(text, (x, 0.93), xycoords=trans, xytext=(0, -13), textcoords="offset points",
                    ha="center", fontsize=7, color=BAD)
        n += 1
    return n


def _shade_warmup(ax, spans, label: bool) -> None:
    for i, (x0, x1) in enumerate(spans):
        ax.axvspan(x0, x1, color="#9e9e9e", alpha=0.18, linewidth=0, label="warm-up" if label and i == 0 else None)


def _no_data(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#666666", fontsize=9)


def _runs(report: dict[str, Any], baseline: dict[str, Any] | None) -> list[tuple[dict[str, Any], str, str]]:
    """(report, label, line style) for the current run and the baseline, if any."""
    if baseline is None and isinstance(report.get("baseline"), dict):
        baseline = report["baseline"].get("report")
    ref = None
    if isinstance(report.get("baseline"), dict):
        ref = report["baseline"].get("ref")
    runs = [(report, "working tree" if baseline else "this run", "-")]
    if baseline:
        ref = ref or baseline.get("baseline_ref")
        if ref and str(ref).endswith(".json"):
            ref = Path(ref).name  # a saved report: its file name, not the whole path
        runs.append((baseline, f"baseline {ref}" if ref else "baseline", "--"))
    return runs


def _memory_panel(ax, runs, spans) -> None:
    all_values = [y for r, _, _ in runs for pts in memory_series(r).values() for _, y in pts if y is not None]
    unit, scale = byte_unit(all_values)
    drawn = 0
    for r, _, style in runs:
        series = memory_series(r)
        for key, label, color, lw, marker in MEMORY_SERIES:
            drawn += _line(ax, series[key], scale, color=color, lw=lw, marker=marker, style=style,
                           label=label if style == "-" else None)
    source = runs[0][0].get("memory_source") or "memory"
    growth = []
    for r, label, _ in runs:
        value = (r.get("summary") or {}).get("growth_bytes_per_step")
        if _num(value) is not None and math.isfinite(value):
            growth.append(f"{_fmt_size(value, signed=True)}/step" + (f" ({label})" if len(runs) > 1 else ""))
    other = {r.get("memory_source") for r, _, _ in runs[1:]} - {source}
    if other:  # CUDA allocator vs dispatch counts: drawn together, but not the same quantity
        source += f" (baseline: {', '.join(sorted(map(str, other)))}; not comparable)"
    ax.set_title(f"memory per step — {source}" + (f"; growth after warm-up {', '.join(growth)}" if growth else ""),
                 loc="left", fontsize=10, wrap=True)
    ax.set_ylabel(unit)
    if not drawn:
        _no_data(ax, "no memory measured")
    else:
        ax.set_ylim(bottom=0)
        budget = _num(((runs[0][0].get("settings") or {}).get("budgets") or {}).get("peak_memory_mb"))
        if budget is not None and budget * (1 << 20) <= 2 * max(all_values):  # far above: it would flatten the data
            ax.axhline(budget * (1 << 20) / scale, color=BAD, linestyle=":", linewidth=1.3,
                       label=f"budget peak_memory_mb {budget:g}")
    _shade_warmup(ax, spans, label=True)


def _log_panel(ax, runs, spans, key: str, title: str, color: str, log: bool) -> None:
    drawn = marked = 0
    for r, _, style in runs:
        pts = value_series(r, key)
        drawn += _line(ax, pts, color=color, lw=1.8, marker="o", style=style, positive=log)
        marked += _mark_nonfinite(ax, pts, style=style)
    if log and drawn:
        _log_axis(ax, [y for r, _, _ in runs for _, y in value_series(r, key)])
    ax.set_title(title, loc="left", fontsize=10)
    if not drawn:
        _no_data(ax, f"no finite {key.replace('_', ' ')}" if marked else f"no {key.replace('_', ' ')} reported")
        ax.set_yticks([])
    _shade_warmup(ax, spans, label=False)


def _log_axis(ax, values) -> None:
    """Log scale with plain number labels; within one decade, a few evenly spaced ticks (the
    default would label every minor tick in scientific notation)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

    ax.set_yscale("log")
    shown = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    label = FuncFormatter(lambda v, _: f"{v:.3g}")
    ax.yaxis.set_major_formatter(label)
    if shown and max(shown) / min(shown) < 10:
        ax.yaxis.set_major_locator(MaxNLocator(5))
        ax.yaxis.set_minor_locator(NullLocator())


def _estimate_panel(ax, est: dict[str, Any]) -> None:
    breakdown = est.get("breakdown") or {}
    variants = [v for v in est.get("variants") or [] if isinstance(v, dict) and _num(v.get("peak_bytes")) is not None]
    device = _num(est.get("device_memory_bytes"))
    peak = _num(est.get("peak_bytes"))
    values = [v for v in (peak, device, sum(_num(breakdown.get(k)) or 0 for k, *_ in BREAKDOWN)) if v]
    values += [_num(v["peak_bytes"]) for v in variants]
    unit, scale = byte_unit(values)
    label = est.get("label") or "estimate"
    bottom = 0.0
    for key, name, color in BREAKDOWN:
        value = _num(breakdown.get(key)) or 0.0
        if value > 0:
            ax.bar(0, value / scale, bottom=bottom, color=color, width=0.6, label=name, edgecolor="white")
            bottom += value / scale
    names = ["predicted\n" + (f"({est['peak_phase']})" if est.get("peak_phase") else "")]
    if peak is not None:
        ax.hlines(peak / scale, -0.36, 0.36, colors="black", linewidth=1.5)
        ax.annotate(_fmt_size(peak), (0, max(peak / scale, bottom)), xytext=(0, 3), textcoords="offset points",
                    ha="center", fontsize=8)
    from matplotlib.patches import Patch

    for i, v in enumerate(variants, start=1):
        computed = bool(v.get("computed"))
        height = _num(v["peak_bytes"]) / scale
        over = device is not None and _num(v["peak_bytes"]) > device
        color = "#cfd8e3" if device is None else ("#f2b8b5" if over else "#b7dfb9")
        ax.bar(i, height, width=0.6, color=color, edgecolor="#1f4e79", hatch="//" if computed else None)
        ax.annotate(_fmt_size(_num(v["peak_bytes"])), (i, height), xytext=(0, 3), textcoords="offset points",
                    ha="center", fontsize=7)
        names.append(textwrap.fill(str(v.get("name", "?")), 14) + ("\n(computed)" if computed else ""))
    if device:
        ax.axhline(device / scale, color=BAD, linestyle="--", linewidth=1.3, label=f"device memory {_fmt_size(device)}")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(unit)
    ax.set_ylim(bottom=0, top=max([bottom, *(h / scale for h in values)], default=1) * 1.15 or 1)
    fits = est.get("fits")
    verdict = "" if fits is None else (" — fits" if fits else " — does NOT fit")
    ax.set_title(f"{label}: peak {_fmt_size(peak) if peak is not None else '?'}{verdict}", loc="left", fontsize=10,
                 color="black" if fits is not False else BAD)
    handles, labels = ax.get_legend_handles_labels()
    if variants:
        if device is not None:
            handles += [Patch(facecolor="#b7dfb9", edgecolor="#1f4e79"), Patch(facecolor="#f2b8b5", edgecolor="#1f4e79")]
            labels += ["variant fits", "variant does not fit"]
        if any(v.get("computed") for v in variants):
            handles.append(Patch(facecolor="white", edgecolor="#1f4e79", hatch="//"))
            labels.append("computed, not run")
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def build_figure(report: dict[str, Any], baseline: dict[str, Any] | None = None):
    """The matplotlib Figure for a report (no file written)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    runs = _runs(report, baseline)
    estimate = report.get("estimate") if isinstance(report.get("estimate"), dict) else None
    has_steps = any(r.get("steps") for r, _, _ in runs)
    spans = warmup_spans(report)
    cols = (1 if has_steps else 0) + (1 if estimate else 0) or 1
    width = (10.5 if has_steps else 0) + (7.5 if estimate else 0) or 8
    fig = Figure(figsize=(width, 9 if has_steps else 5.5), dpi=100, layout="constrained")
    grid = fig.add_gridspec(3 if has_steps else 1, cols, height_ratios=[2, 1.2, 1.2] if has_steps else None,
                            width_ratios=[10.5, 7.5] if cols == 2 else None)
    if has_steps:
        mem = fig.add_subplot(grid[0, 0])
        grad = fig.add_subplot(grid[1, 0], sharex=mem)
        loss = fig.add_subplot(grid[2, 0], sharex=mem)
        _memory_panel(mem, runs, spans)
        _log_panel(grad, runs, spans, "grad_norm", "gradient norm (global L2, before optimizer.step(); log scale)",
                   "#c0392b", log=True)
        _log_panel(loss, runs, spans, "loss", "loss", "#34495e", log=False)
        loss.set_xlabel("step")
        loss.xaxis.set_major_locator(MaxNLocator(integer=True))
        numbers = [s["step"] for r, _, _ in runs for s in r.get("steps") or [] if isinstance(s.get("step"), int)]
        if numbers:
            loss.set_xlim(min(numbers) - 0.6, max(numbers) + 0.6)
            if max(numbers) - min(numbers) < 16:
                loss.set_xticks(range(min(numbers), max(numbers) + 1))
        for ax in (mem, grad, loss):
            ax.grid(True, alpha=0.3)
        handles, labels = mem.get_legend_handles_labels()
        if len(runs) > 1:
            handles += [Line2D([], [], color="black", linestyle=style) for _, _, style in runs]
            labels += [label for _, label, _ in runs]
        if any(not math.isfinite(y) for r, _, _ in runs for k in ("loss", "grad_norm")
               for _, y in value_series(r, k) if y is not None):
            handles.append(Line2D([], [], color=BAD, marker="X", linestyle="none"))
            labels.append("non-finite (NaN/Inf)")
        mem.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if estimate:
        _estimate_panel(fig.add_subplot(grid[:, cols - 1] if has_steps else grid[0, 0]), estimate)
    env = report.get("environment") or {}
    where = " · ".join(str(x) for x in (env.get("device"), f"torch {env['torch']}" if env.get("torch") else None) if x)
    title = f"stabfix verify {report.get('project', '')}" + (f"  ({where})" if where else "")
    error = report.get("error") if isinstance(report.get("error"), dict) else None
    if error:  # a run that stopped part-way: say so above the steps it did run
        steps = report.get("steps") or []
        after = f" after step {steps[-1]['step']}" if steps else ""
        title += "\n" + textwrap.shorten(f"stopped{after}: {error.get('message', '')}", 140)
    fig.suptitle(title, fontsize=12, x=0.01, ha="left", color=BAD if error else "black")
    return fig


def plot_report(report: dict[str, Any], path: Path | str, baseline: dict[str, Any] | None = None) -> Path:
    """Draw REPORT (a `stabfix verify` report dict; `baseline`, or the report's own `baseline`
    entry, on the same axes) into PATH (.png or .svg), atomically. Raises PlotError."""
    path = Path(path)
    problem = path_problem(path) or matplotlib_problem()
    if problem:
        raise PlotError(problem)
    import matplotlib

    fig = build_figure(report, baseline)
    fmt = FORMATS[path.suffix.lower()]
    meta = {"Date": None} if fmt == "svg" else {"Software": "stabfix"}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    except OSError as exc:
        raise PlotError(f"cannot write {path}: {exc}") from None
    try:
        with os.fdopen(fd, "wb") as out, matplotlib.rc_context({"svg.hashsalt": "stabfix", "svg.fonttype": "path"}):
            fig.savefig(out, format=fmt, metadata=meta)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private; a picture is not
        os.replace(tmp, path)
    except OSError as exc:
        raise PlotError(f"cannot write {path}: {exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
