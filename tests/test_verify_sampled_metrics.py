"""Reports with sampled steps (peak unknown, live bytes counted at the boundaries): summary, checks
and settings (pure Python, no torch)."""

from __future__ import annotations

import pytest
from test_verify_settings import MB, _run, _step

from stabfix.verify.metrics import analyze
from stabfix.verify.settings import SettingsError, resolve_settings


def _sampled(i, live, **kw):
    return _step(i, live, peak_bytes=None, phase_peak_bytes={"forward": None, "backward": None, "optimizer": None},
                 exact=False, **kw)


def test_peaks_come_from_exact_steps_and_times_from_sampled_ones():
    settings = resolve_settings({"entry": "a:b", "steps": 10, "warmup": 2}, {})
    steps = [_sampled(i, MB, warmup=i <= 2, time_ms=10.0) for i in range(1, 10)]
    steps.append(_step(10, MB, time_ms=14.0, exact=True))
    report = analyze(settings, _run(steps), ".")
    s = report["summary"]
    assert s["exact_steps"] == [10]
    assert s["peak_memory_bytes"] == 2 * MB and s["peak_step"] == 10 and s["peak_phase"] == "forward"
    assert s["peak_forward_bytes"] == 2 * MB and s["peak_backward_bytes"] == MB
    assert s["step_time_median_ms"] == 10.0 and s["step_time_steps"] == "sampled"
    assert s["growth_bytes_per_step"] == 0
    assert report["exit_code"] == 0


def test_growth_is_judged_on_sampled_steps_too():
    settings = resolve_settings({"entry": "a:b", "steps": 8, "warmup": 2}, {})
    steps = [_sampled(i, i * MB, warmup=i <= 2) for i in range(1, 8)] + [_step(8, 8 * MB, exact=True)]
    report = analyze(settings, _run(steps), ".")
    growth = next(c for c in report["checks"] if c["name"] == "memory growth")
    assert growth["status"] == "fail" and "+1.00 MiB/step (steps 3-8)" in growth["message"]


def test_reports_without_the_exact_field_are_all_exact():
    settings = resolve_settings({"entry": "a:b", "steps": 4, "warmup": 1}, {})
    steps = [_step(i, MB, warmup=i == 1, time_ms=float(i)) for i in range(1, 5)]
    s = analyze(settings, _run(steps), ".")["summary"]
    assert s["exact_steps"] == [1, 2, 3, 4] and s["step_time_steps"] == "all" and s["step_time_median_ms"] == 3.0


def test_exact_steps_setting():
    assert resolve_settings({"entry": "a:b"}, {}).exact_steps == "auto"
    assert resolve_settings({"entry": "a:b", "exact_steps": "all"}, {}).exact_steps == "all"
    assert resolve_settings({"entry": "a:b", "exact_steps": "all"}, {"exact_steps": "auto"}).exact_steps == "auto"
    with pytest.raises(SettingsError, match="verify.exact_steps must be auto or all"):
        resolve_settings({"entry": "a:b", "exact_steps": 3}, {})


def test_exact_steps_flag_overrides_the_config(tmp_path):
    from test_verify_run import CASES, cli

    every = cli([f"{CASES}/healthy", "--steps", "4", "--exact-steps", "all"], json_path=tmp_path / "all.json")
    assert every.code == 0, every.out + every.err
    assert [step["exact"] for step in every.report["steps"]] == [True] * 4
    default = cli([f"{CASES}/healthy", "--steps", "4"], json_path=tmp_path / "auto.json")
    assert [step["exact"] for step in default.report["steps"]] == [False, False, False, True]
    bad = cli([f"{CASES}/healthy", "--exact-steps", "some"])
    assert bad.code == 2 and "--exact-steps must be auto or all" in bad.err and "Traceback" not in bad.err
    assert "stabfix.yaml" not in bad.err  # the flag is to blame, not the config
