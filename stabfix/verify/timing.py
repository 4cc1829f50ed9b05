"""Is a change in step time real, or the noise of a busy machine? (pure Python, no torch)

Step times of a smoke-train are few (8 after warm-up by default) and, on a shared machine, noisy. A
change is judged only when there are enough of them and it stands out of the noise measured in the
same runs:

- at least `MIN_SAMPLES` step times on each side (the two halves of one run for a trend; each whole
  run for a before/after comparison);
- the medians differ by more than `NOISE_UNITS` standard errors. The spread of each side is the
  median absolute deviation (×1.4826, the normal standard deviation it estimates), never below
  `NOISE_FLOOR` of the median (a timer that repeats to the microsecond is not noise-free); the
  standard error of a median is 1.2533 × spread / √n;
- and the ranks agree: a Mann-Whitney U test (normal approximation with tie and continuity
  corrections) gives a two-sided p below `MAX_P`. Medians against the MAD alone are fooled by the
  two-level times of a busy machine (a step either gets the cores or waits): a few slow steps more
  in one half move its median without any trend; the rank test sees the mix.

Otherwise there is no verdict: "too few steps" or "within noise".
"""

from __future__ import annotations

import math
import statistics
from typing import Any

MIN_SAMPLES = 4  # step times on each side of a comparison (the halves of 8 for a trend)
NOISE_UNITS = 3.0  # the difference of the medians, in standard errors, for a confident verdict
NOISE_FLOOR = 0.01  # the spread is at least 1% of the median
MAD_TO_SD = 1.4826
MEDIAN_SE = 1.2533  # standard error of a median / (standard deviation / sqrt(n)) for normal noise
MAX_P = 0.05  # two-sided p of the rank test for a confident verdict


def timed_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps whose times are compared: after warm-up, and of those the sampled ones when there are
    some (they run without the per-op accounting, so they are the closest to the bare step)."""
    post = [s for s in steps if not s.get("warmup")] or steps
    sampled = [s for s in post if s.get("exact", True) is False]
    return sampled or post


def spread(times: list[float]) -> float:
    """Robust standard deviation: 1.4826 × the median absolute deviation, at least 1% of the median."""
    mid = statistics.median(times)
    mad = statistics.median(abs(t - mid) for t in times)
    return max(MAD_TO_SD * mad, NOISE_FLOOR * abs(mid))


def rank_p(before: list[float], after: list[float]) -> float:
    """Two-sided p of the Mann-Whitney U test (normal approximation, tie and continuity corrected)."""
    n1, n2 = len(before), len(after)
    pooled = sorted([(v, 0) for v in before] + [(v, 1) for v in after])
    ranks: list[float] = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        ties += (j - i + 1) ** 3 - (j - i + 1)
        i = j + 1
    u = sum(r for r, (_, side) in zip(ranks, pooled) if side == 1) - n2 * (n2 + 1) / 2
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


def shift(before: list[float], after: list[float]) -> dict[str, Any]:
    """How the median moved from `before` to `after`, and whether that is beyond the noise:
    {"judged": bool, "reason": str (when not judged), "before_ms", "after_ms", "ratio", "noise_ms", "z", "p"}."""
    out: dict[str, Any] = {"samples": [len(before), len(after)]}
    if min(len(before), len(after)) < MIN_SAMPLES:
        return {**out, "judged": False,
                "reason": f"too few steps ({len(before)} and {len(after)} timed, {MIN_SAMPLES} needed in each)"}
    b, a = statistics.median(before), statistics.median(after)
    se = math.hypot(MEDIAN_SE * spread(before) / math.sqrt(len(before)),
                    MEDIAN_SE * spread(after) / math.sqrt(len(after)))
    z = (a - b) / se if se > 0 else math.inf
    p = rank_p(before, after)
    judged = abs(z) > NOISE_UNITS and p < MAX_P
    out.update({"before_ms": b, "after_ms": a, "ratio": a / b if b > 0 else None, "noise_ms": se, "z": z,
                "p": p, "judged": judged})
    if not judged:
        out["reason"] = f"within noise ({a - b:+.1f} ms, standard error {se:.1f} ms, rank test p={p:.2f})"
    return out
