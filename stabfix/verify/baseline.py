"""Before/after: run the same seeded smoke-train on a git ref (in a temporary detached worktree) or
load a saved `--json` report, and compare metric by metric."""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterator

from stabfix.verify.metrics import REPORT_VERSION, fmt_bytes, fmt_num
from stabfix.verify.timing import shift, timed_steps

MEMORY_TOLERANCE = 0.01  # relative: memory is exact on CPU, allocator-rounded on CUDA
TIME_TOLERANCE = 0.25  # relative: step times vary between runs and machines
VALUE_TOLERANCE = 0.01  # loss, grad norm: seeded runs repeat, but kernels may differ slightly
GROWTH_FLOOR = 1024  # bytes/step treated as no change in growth


class BaselineError(Exception):
    """The baseline could not be set up (not a git repo, unknown ref, unreadable report)."""


def looks_like_report(ref: str) -> bool:
    p = Path(ref)
    return p.suffix == ".json" or p.is_file()


def load_report(ref: str) -> dict[str, Any]:
    path = Path(ref)
    if not path.is_file():
        raise BaselineError(f"baseline report {ref} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_parse_constant)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"cannot read baseline report {ref}: {exc}") from None
    if not isinstance(data, dict) or data.get("stabfix_verify_report") != REPORT_VERSION:
        raise BaselineError(f"{ref} is not a `stabfix verify --json` report")
    return _revive(data)


def _parse_constant(name: str) -> float:
    return float(name.replace("Infinity", "inf"))


def _revive(value: Any) -> Any:
    """Reports store non-finite numbers as the strings "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, dict):
        return {k: _revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_revive(v) for v in value]
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    return value


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise BaselineError("--baseline REF needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise BaselineError(f"git {' '.join(args)} timed out") from None


def _entry_files(entry: str) -> list[str]:
    """The files (relative to the project) the entry's module may live in."""
    module = entry.rpartition(":")[0]
    if module.endswith(".py"):
        return [module]
    base = module.replace(".", "/")
    return [f"{base}.py", f"{base}/__init__.py"]


def _entry_missing_at_ref(project: Path, mapped: Path, root: Path, entry: str, ref: str) -> str | None:
    """Why REF's checkout cannot run the entry the working tree has (None: it has the file)."""
    for name in _entry_files(entry):
        here, there = project / name, mapped / name
        if not here.is_file() or there.is_file():
            continue
        shown = here.resolve().relative_to(root).as_posix()
        tracked = _git(["ls-files", "--error-unmatch", "--", shown], root).returncode == 0
        why = (f"the entry file {shown} is untracked in git, so {ref}'s checkout lacks it" if not tracked
               else f"the entry file {shown} does not exist at {ref}")
        return (f"baseline {ref} cannot run: {why}; commit it first, or compare with a saved report "
                "(--baseline report.json from `stabfix verify --json report.json`)")
    return None


@contextlib.contextmanager
def worktree(project: Path, ref: str, entry: str | None = None) -> Iterator[Path]:
    """Check REF out in a temporary detached worktree; yield PATH's counterpart inside it. With
    `entry`, a checkout that lacks the entry's file is a BaselineError saying why (e.g. untracked)."""
    top = _git(["rev-parse", "--show-toplevel"], project)
    if top.returncode != 0:
        raise BaselineError(f"{project} is not inside a git repository; --baseline needs a git ref "
                            "or a saved report.json")
    root = Path(top.stdout.strip()).resolve()
    resolved = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
    if resolved.returncode != 0:
        raise BaselineError(f"git ref '{ref}' not found in {root}")
    rel = project.resolve().relative_to(root)
    tmp = Path(tempfile.mkdtemp(prefix="stabfix-baseline-"))
    tree = tmp / "tree"
    added = _git(["worktree", "add", "--detach", "--quiet", str(tree), resolved.stdout.strip()], root)
    if added.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BaselineError(f"git worktree add failed: {added.stderr.strip()}")
    try:
        mapped = tree / rel
        if not mapped.is_dir():
            raise BaselineError(f"{rel.as_posix() or '.'} does not exist at {ref}")
        missing = _entry_missing_at_ref(project.resolve(), mapped, root, entry, ref) if entry else None
        if missing:
            raise BaselineError(missing)
        yield mapped
    finally:
        removed = _git(["worktree", "remove", "--force", str(tree)], root)
        shutil.rmtree(tmp, ignore_errors=True)
        if removed.returncode != 0:
            _git(["worktree", "prune"], root)


# metric key, label, kind ("mem" | "growth" | "time" | "value" | "count"), lower is better?
METRICS: list[tuple[str, str, str, bool | None]] = [
    ("peak_memory_bytes", "peak memory", "mem", True),
    ("peak_forward_bytes", "  peak in forward", "mem", True),
    ("peak_backward_bytes", "  peak in backward", "mem", True),
    ("peak_optimizer_bytes", "  peak in optimizer", "mem", True),
    ("live_end_bytes", "live after last step", "mem", True),
    ("growth_bytes_per_step", "memory growth (per step)", "growth", True),
    ("grad_norm_max", "grad norm (max)", "value", True),
    ("loss_last", "loss (last step)", "value", True),
    ("step_time_median_ms", "step time (median ms)", "time", True),
    ("trainable_params", "trainable params", "count", True),
    ("total_params", "total params", "count", None),
    ("failed_checks", "failed checks", "count", True),
]


def _metric(report: dict[str, Any], key: str) -> Any:
    if key == "failed_checks":
        if report.get("error"):
            return None
        return sum(1 for c in report.get("checks", []) if c["status"] == "fail")
    return (report.get("summary") or {}).get(key)


def _fmt(kind: str, value: Any) -> str:
    if value is None:
        return "-"
    if kind == "mem":
        return fmt_bytes(value)
    if kind == "growth":
        return fmt_bytes(value, signed=True)
    if kind == "time":
        return f"{value:.1f}"
    return fmt_num(value)


def _verdict(kind: str, base: Any, cur: Any, lower_better: bool | None) -> str:
    if base is None or cur is None:
        return "n/a"
    bf, cf = math.isfinite(base), math.isfinite(cur)
    if not bf or not cf:
        if bf == cf:
            return "same" if (math.isnan(base) and math.isnan(cur)) or base == cur else "changed"
        return "better" if cf else "worse"
    diff = cur - base
    if kind == "count":
        same = diff == 0
    elif kind == "growth":
        same = abs(diff) <= max(GROWTH_FLOOR, MEMORY_TOLERANCE * abs(base))
    else:
        tol = {"mem": MEMORY_TOLERANCE, "time": TIME_TOLERANCE}.get(kind, VALUE_TOLERANCE)
        same = abs(diff) <= tol * abs(base) or (base == 0 and cur == 0)
    if same:
        return "same"
    if lower_better is None:
        return "changed"
    return "better" if (diff < 0) == lower_better else "worse"


def _step_times(report: dict[str, Any]) -> list[float]:
    return [s["time_ms"] for s in timed_steps(report.get("steps") or []) if isinstance(s.get("time_ms"), (int, float))]


def _time_verdict(base: dict[str, Any], cur: dict[str, Any], b: Any, c: Any) -> tuple[str, str | None]:
    """better/worse/same for the median step time only when the runs' own noise allows a verdict
    (stabfix.verify.timing); otherwise "unclear" and why."""
    moved = shift(_step_times(base), _step_times(cur))
    if not moved["judged"]:
        return "unclear", moved["reason"]
    return _verdict("time", b, c, True), None


def compare(base: dict[str, Any], cur: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for key, label, kind, lower in METRICS:
        b, c = _metric(base, key), _metric(cur, key)
        if b is None and c is None:
            continue
        if b is not None and c is not None and all(math.isfinite(x) for x in (b, c)):
            delta = c - b
            if kind in ("mem", "growth"):
                delta_text = fmt_bytes(delta, signed=True)
            elif kind == "time":
                delta_text = f"{delta:+.1f}"
            elif kind == "count":
                delta_text = f"{delta:+,}"
            else:
                delta_text = f"{delta:+.3g}"
            if b and kind != "count":
                delta_text += f" ({100 * delta / abs(b):+.1f}%)"
        else:
            delta, delta_text = None, "-"
        verdict, note = _verdict(kind, b, c, lower), None
        if kind == "time" and verdict in ("better", "worse"):
            verdict, note = _time_verdict(base, cur, b, c)
        row = {
            "metric": key, "label": label, "baseline": b, "current": c, "delta": delta,
            "baseline_text": _fmt(kind, b), "current_text": _fmt(kind, c), "delta_text": delta_text,
            "verdict": verdict,
        }
        if note:
            row["note"] = note
        rows.append(row)
    return rows
