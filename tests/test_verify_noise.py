"""Noise is not news: step-time trends and before/after verdicts only beyond the run's own noise
(issue 20, item 4.9), and a live-memory sparkline that does not magnify a few bytes (item 4.13)."""

from __future__ import annotations

import io

from rich.console import Console
from test_verify_settings import _run, _step

from stabfix.verify.baseline import compare
from stabfix.verify.metrics import analyze
from stabfix.verify.render import summary_table
from stabfix.verify.settings import MB, resolve_settings
from stabfix.verify.sparkline import BLOCKS, summary_lines


def _report(times: list[float], warmup: int = 2, live: list[int] | None = None) -> dict:
    steps = len(times) + warmup
    settings = resolve_settings({"entry": "a:b", "steps": steps, "warmup": warmup}, {})
    records = [_step(i, (live[i - 1] if live else MB), warmup=i <= warmup,
                     time_ms=(10.0 if i <= warmup else times[i - warmup - 1])) for i in range(1, steps + 1)]
    return analyze(settings, _run(records), ".")


def _printed(report: dict) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(summary_table(report))
    return buffer.getvalue()


def _trend_warning(report: dict) -> dict | None:
    return next((c for c in report["checks"] if c["name"] == "step time trend"), None)


def test_three_noisy_step_times_a_side_give_no_trend():
    """Two slow steps out of six on a busy machine: no "step time grows" warning, no trend figure."""
    report = _report([10.0, 60.0, 11.0, 58.0, 12.0, 70.0])
    assert _trend_warning(report) is None
    assert report["summary"]["step_time_trend_judged"] is False
    row = next(line for line in _printed(report).splitlines() if "step time (median)" in line)
    assert "trend" in row and "%/step" not in row
    assert "no trend judged: only 6 timed steps after warm-up (8 needed" in row


def test_two_level_noise_does_not_make_a_trend():
    """Enough steps, medians far apart, but the slow steps are mixed through both halves: within noise."""
    report = _report([10.0, 11.0, 40.0, 12.0, 42.0, 13.0, 40.0, 12.0, 45.0, 14.0, 41.0, 50.0])
    assert _trend_warning(report) is None
    assert "within noise" in report["summary"]["step_time_trend_note"]


def test_a_real_slowdown_is_judged_with_its_confidence():
    times = [10.0, 10.2, 9.9, 10.1, 10.0, 10.3, 30.0, 30.5, 29.8, 30.2, 30.1, 29.9]
    report = _report(times)
    warning = _trend_warning(report)
    assert warning is not None and "3.0x slower" in warning["message"] and "rank test p=0.005" in warning["message"]
    row = next(line for line in _printed(report).splitlines() if "step time (median)" in line)
    assert "%/step (beyond the noise, rank test p=0.005)" in row


def _time_row(base: dict, cur: dict) -> dict:
    return next(r for r in compare(base, cur) if r["metric"] == "step_time_median_ms")


def test_baseline_step_time_verdict_needs_samples_and_an_effect_beyond_noise():
    # 3 noisy timed steps each: the medians differ by 40%, but nothing can be concluded
    few = _time_row(_report([10.0, 10.0, 30.0]), _report([14.0, 9.0, 20.0]))
    assert few["verdict"] == "unclear" and "too few steps" in few["note"]
    # 8 each, slow steps scattered through both runs: within noise
    noisy = _time_row(_report([10, 30, 11, 12, 35, 10, 11, 12]), _report([14, 31, 12, 33, 14, 36, 13, 30]))
    assert noisy["verdict"] == "unclear" and "within noise" in noisy["note"]
    # 8 each, every step of the current run twice as slow: worse, with confidence
    clear = _time_row(_report([10, 10.2, 9.9, 10.1, 10, 10.3, 10.1, 9.8]), _report([20, 20.5, 19.8, 20.2, 20, 20.4, 19.9, 20.1]))
    assert clear["verdict"] == "worse" and "note" not in clear


def _live_sparkline(live: list[int]) -> str:
    report = _report([10.0] * (len(live) - 2), live=live)
    return dict((name, line) for name, line, _ in summary_lines(report))["live memory"]


def test_live_memory_sparkline_draws_byte_noise_flat():
    """2.13 MiB -> 2.14 MiB is drawn on one level, not from the bottom to the top."""
    base = int(2.13 * MB)
    line = _live_sparkline([base, base + 4096, base + 10240, base + 2048, base + 8192, base + 10240])
    assert len(set(line)) == 1 and line[0] == BLOCKS[0]


def test_live_memory_sparkline_still_shows_real_growth():
    line = _live_sparkline([2 * MB + i * MB // 4 for i in range(8)])  # +256 KiB a step: 2 MiB -> 3.75 MiB
    assert line[0] == BLOCKS[0] and line[-1] == BLOCKS[-1] and list(line) == sorted(line)
