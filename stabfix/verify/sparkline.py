"""One-line terminal sparklines for the verify summary: live memory and grad norm per step.

Unicode block characters when the console can encode them, ASCII otherwise. A step whose value
is missing (not measured on that step) is a space; a NaN / Inf value is `!`.
"""

from __future__ import annotations

import math
from typing import Any

BLOCKS = "▁▂▃▄▅▆▇█"
ASCII_LEVELS = "_.-:=+*#"
NONFINITE = "!"
MISSING = " "
FLAT = 0.001  # grad norms within 0.1% of each other (e.g. clipped to max_norm) are drawn flat
# Live memory is drawn on a scale at least 5% of its level tall: a change of a few bytes or KiB on
# MiBs (allocator-free noise, a scalar kept one step longer) stays on one level instead of filling the
# full height; a change of 5% of the level or more is drawn as before, from the lowest to the top level.
MEMORY_MIN_SPAN = 0.05
WIDTH = 60  # more steps than this: each character is the largest value of a run of steps


def can_encode(encoding: str | None, text: str = BLOCKS) -> bool:
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _bucket(values: list[float | None], width: int) -> list[float | None]:
    """At most `width` values: the largest of each run (a non-finite value wins, then any value
    over a missing one)."""
    if len(values) <= width:
        return values
    out: list[float | None] = []
    for i in range(width):
        chunk = values[i * len(values) // width:(i + 1) * len(values) // width]
        present = [v for v in chunk if v is not None]
        bad = [v for v in present if not math.isfinite(v)]
        out.append(bad[0] if bad else (max(present) if present else None))
    return out


def sparkline(values: list[Any], *, log: bool = False, ascii_only: bool = False, width: int = WIDTH,
              flat_within: float = 0.0, min_span: float = 0.0) -> str:
    """`values` scaled from their minimum to their maximum onto 8 levels (log scale: of the
    positive values; zero and below sit on the lowest level). Values that all lie within
    `flat_within` (relative) of the largest are drawn flat, so float noise does not look like a trend.
    `min_span` (relative to the largest value, linear scale): the drawn range is at least that tall,
    so a change much smaller than the level stays on the lowest levels."""
    levels = ASCII_LEVELS if ascii_only else BLOCKS
    nums = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in values]
    nums = _bucket(nums, width)

    def key(v: float) -> float | None:
        if log:
            return math.log10(v) if v > 0 else None
        return v

    keyed = [key(v) for v in nums if v is not None and math.isfinite(v)]
    keyed = [k for k in keyed if k is not None]
    lo, hi = (min(keyed), max(keyed)) if keyed else (0.0, 0.0)
    finite = [abs(v) for v in nums if v is not None and math.isfinite(v)]
    if finite and max(finite) - min(finite) <= flat_within * max(finite):
        hi = lo
    elif finite and min_span and not log:
        hi = max(hi, lo + min_span * max(finite))
    chars = []
    for v in nums:
        if v is None:
            chars.append(MISSING)
        elif not math.isfinite(v):
            chars.append(NONFINITE)
        else:
            k = key(v)
            if k is None or hi == lo:
                chars.append(levels[0])
            else:
                chars.append(levels[min(len(levels) - 1, int((k - lo) / (hi - lo) * len(levels)))])
    return "".join(chars)


def summary_lines(report: dict[str, Any], ascii_only: bool = False) -> list[tuple[str, str, str]]:
    """(name, sparkline, range text) for live memory after each step and the grad norm."""
    from stabfix.verify.metrics import fmt_bytes, fmt_num

    steps = report.get("steps") or []
    if not steps:
        return []
    cuda = report.get("memory_source") == "cuda allocator"
    live = [(s.get("cuda") or {}).get("allocated_end_bytes") if cuda else s.get("live_end_bytes") for s in steps]
    norms = [s.get("grad_norm") for s in steps]
    out = []
    shown = [v for v in live if isinstance(v, (int, float))]
    if shown:
        out.append(("live memory", sparkline(live, ascii_only=ascii_only, min_span=MEMORY_MIN_SPAN),
                    f"{fmt_bytes(min(shown))} … {fmt_bytes(max(shown))}" if not ascii_only
                    else f"{fmt_bytes(min(shown))} .. {fmt_bytes(max(shown))}"))
    finite = [v for v in norms if isinstance(v, (int, float)) and math.isfinite(v)]
    if any(v is not None for v in norms):
        dots = ".." if ascii_only else "…"
        text = f"{fmt_num(min(finite))} {dots} {fmt_num(max(finite))}, log scale" if finite else "no finite value"
        if any(isinstance(v, float) and not math.isfinite(v) for v in norms):
            text += f"; {NONFINITE} = NaN/Inf"
        out.append(("grad norm", sparkline(norms, log=True, ascii_only=ascii_only, flat_within=FLAT), text))
    return out
