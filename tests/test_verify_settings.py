"""`stabfix verify` settings, analysis and comparison logic: pure Python, no child process."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from stabfix.verify.metrics import analyze, slope
from stabfix.verify.baseline import compare
from stabfix.verify.runner import RunResult
from stabfix.verify.settings import MB, SettingsError, parse_budget_flags, resolve_settings


def test_defaults_and_overrides():
    s = resolve_settings({"entry": "train:build"}, {})
    assert (s.steps, s.warmup, s.seed, s.device, s.timeout, s.budgets) == (10, 2, 0, "auto", 300.0, {})
    s = resolve_settings(
        {"entry": "train:build", "steps": 5, "budgets": {"grad_norm": 10, "trainable_params": 100}},
        {"steps": 7, "entry": "other:fn", "budgets": {"grad_norm": "3.5"}, "device": None},
    )
    assert s.entry == "other:fn" and s.steps == 7
    assert s.budgets == {"grad_norm": 3.5, "trainable_params": 100.0}


@pytest.mark.parametrize(
    "section, overrides, needle",
    [
        ({"entry": "a:b", "stepz": 3}, {}, "unknown key 'stepz'"),
        ({"entry": "a:b", "budgets": {"peak_mem": 3}}, {}, "unknown budget 'peak_mem'"),
        ({"entry": "a:b"}, {"budgets": {"latency": 1}}, "unknown budget 'latency'"),
        ({}, {}, "no verify entry"),
        ({"entry": "train"}, {}, "module:function"),
        ({"entry": "a:b", "steps": 0}, {}, "verify.steps must be >= 1"),
        ({"entry": "a:b", "steps": 3, "warmup": 3}, {}, "warmup (3) must be smaller"),
        ({"entry": "a:b", "device": "tpu"}, {}, "verify.device"),
        ({"entry": "a:b", "timeout": 0}, {}, "timeout must be > 0"),
        ({"entry": "a:b", "steps": True}, {}, "must be an integer"),
        ({"entry": "a:b", "budgets": {"grad_norm": "lots"}}, {}, "must be a number"),
    ],
)
def test_bad_settings_name_the_key(section, overrides, needle):
    with pytest.raises(SettingsError, match=None) as info:
        resolve_settings(section, overrides)
    assert needle in str(info.value)


def test_budget_flags():
    assert parse_budget_flags(["grad_norm=1e3", "peak-memory-mb = 12"]) == {"grad_norm": "1e3", "peak_memory_mb": "12"}
    with pytest.raises(SettingsError, match="KEY=VALUE"):
        parse_budget_flags(["grad_norm"])


def test_slope_is_least_squares():
    assert slope([(1, 0.0), (2, 2.0), (3, 4.0)]) == pytest.approx(2.0)
    assert slope([(1, 5.0)]) is None
    assert slope([(1, 1.0), (2, 3.0), (3, 2.0), (4, 4.0)]) == pytest.approx(0.8)


def _step(i, live, warmup=False, loss=1.0, grad=1.0, time_ms=10.0, **extra):
    record = {
        "type": "step", "step": i, "warmup": warmup, "time_ms": time_ms, "start_live_bytes": live,
        "peak_bytes": live + MB, "phase_peak_bytes": {"forward": live + MB, "backward": live, "optimizer": live},
        "live_end_bytes": live, "loss": loss, "grad_norm": grad, "top_params": [["w", grad]],
        "nonfinite_grads": [], "nonfinite_grads_count": 0, "none_grads": [], "none_grads_count": 0,
        "optimizer_steps": 1, "nonfinite_module": None, "modules_checked": 3,
    }
    record.update(extra)
    return record


def _run(steps, done=None):
    return RunResult(start={"device": "cpu"}, ready={"live_before_bytes": 0, "model_state_bytes": 0},
                     steps=steps, done=done or {"params": {"total": 10, "trainable": 10, "frozen": 0},
                                                "survivors": [], "first_nonfinite_module": None})


def test_steady_growth_fails_without_budget_and_budget_decides_with_one():
    settings = resolve_settings({"entry": "a:b", "steps": 6, "warmup": 2}, {})
    growing = [_step(i, i * MB // 2, warmup=i <= 2) for i in range(1, 7)]
    report = analyze(settings, _run(growing), ".")
    assert report["exit_code"] == 1
    growth = next(c for c in report["checks"] if c["name"] == "memory growth")
    assert growth["status"] == "fail" and "+512.00 KiB/step" in growth["message"]

    settings = resolve_settings({"entry": "a:b", "steps": 6, "warmup": 2,
                                 "budgets": {"memory_growth_mb_per_step": 1}}, {})
    assert analyze(settings, _run(growing), ".")["exit_code"] == 0

    flat = [_step(i, MB, warmup=i <= 2) for i in range(1, 7)]
    sawtooth = [_step(i, MB * (i % 2), warmup=i <= 2) for i in range(1, 7)]
    plain = resolve_settings({"entry": "a:b", "steps": 6, "warmup": 2}, {})
    assert analyze(plain, _run(flat), ".")["exit_code"] == 0
    assert analyze(plain, _run(sawtooth), ".")["exit_code"] == 0


def test_grad_norm_budget_names_top_parameter():
    settings = resolve_settings({"entry": "a:b", "steps": 3, "warmup": 1, "budgets": {"grad_norm": 1000}}, {})
    steps = [_step(1, 0), _step(2, 0, grad=7.8e17, top_params=[["stage.1.proj.weight", 7.7e17]]),
             _step(3, 0, grad=math.nan)]
    report = analyze(settings, _run(steps), ".")
    check = next(c for c in report["checks"] if c["name"] == "grad norm")
    assert check["status"] == "fail"
    assert check["message"] == "grad_norm 7.80e+17 > budget 1000 (step 2, top: stage.1.proj.weight)"


def test_compare_verdicts():
    base = {"summary": {"peak_memory_bytes": 100 * MB, "step_time_median_ms": 10.0, "loss_last": 1.0,
                        "grad_norm_max": math.nan, "trainable_params": 500, "growth_bytes_per_step": MB},
            "checks": [{"status": "fail"}]}
    cur = {"summary": {"peak_memory_bytes": 100.5 * MB, "step_time_median_ms": 12.0, "loss_last": 0.5,
                       "grad_norm_max": 3.0, "trainable_params": 100, "growth_bytes_per_step": 0.0},
           "checks": [{"status": "pass"}]}
    verdicts = {r["metric"]: r["verdict"] for r in compare(base, cur)}
    assert verdicts == {
        "peak_memory_bytes": "same",  # +0.5% is within the 1% memory tolerance
        "step_time_median_ms": "same",  # +20% is within the 25% time tolerance
        "loss_last": "better",
        "grad_norm_max": "better",  # NaN -> finite
        "trainable_params": "better",
        "growth_bytes_per_step": "better",
        "failed_checks": "better",
    }
    cur["summary"]["peak_memory_bytes"] = 102 * MB
    cur["summary"]["step_time_median_ms"] = 13.0
    verdicts = {r["metric"]: r["verdict"] for r in compare(base, cur)}
    assert verdicts["peak_memory_bytes"] == "worse"
    # +30%, but these reports carry no step times to measure the noise by: no verdict (tests/test_verify_noise.py)
    assert verdicts["step_time_median_ms"] == "unclear"


def test_importing_the_command_does_not_import_torch():
    code = "import sys, stabfix.verify.command, stabfix.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    assert out.stdout.strip() == "False"


def test_step_without_loss_warns_and_unused_params_warn():
    settings = resolve_settings({"entry": "a:b", "steps": 3, "warmup": 1}, {})
    steps = [_step(i, 0, loss=None, none_grads=["head.bias"], none_grads_count=1) for i in (1, 2, 3)]
    report = analyze(settings, _run(steps), ".")
    assert report["exit_code"] == 0
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses["loss"] == "warn" and statuses["unused parameters"] == "warn"


def test_sizes_are_printed_in_the_unit_that_shows_them():
    from stabfix.verify.metrics import fmt_bytes

    assert fmt_bytes(12, signed=True) == "+12 B"
    assert fmt_bytes(12.5, signed=True) == "+12.5 B"
    assert fmt_bytes(3 * 1024) == "3.00 KiB"
    assert fmt_bytes(-int(1.5 * MB), signed=True) == "-1.50 MiB"
    assert fmt_bytes(0, signed=True) == "+0 B"
    assert fmt_bytes(None) == "-"
    settings = resolve_settings({"entry": "a:b", "steps": 6, "warmup": 2}, {})
    leaking = [_step(i, 1000 + 24 * i, warmup=i <= 2) for i in range(1, 7)]
    growth = next(c for c in analyze(settings, _run(leaking), ".")["checks"] if c["name"] == "memory growth")
    assert "+24 B/step" in growth["message"], growth["message"]


def test_verify_says_in_one_line_that_the_torch_is_too_old(tmp_path):
    import re
    from pathlib import Path

    from stabfix.verify.command import MIN_TORCH, torch_problem

    repo = Path(__file__).resolve().parent.parent
    assert torch_problem("2.1.0") is None and torch_problem("2.13.0+cpu") is None
    assert torch_problem("0+unknown") is None
    old = torch_problem("2.0.1")
    assert old and "torch >= 2.1" in old and "2.0.1" in old and "\n" not in old
    assert "pip install" in torch_problem(None)
    # the extra's lower bound is MIN_TORCH; the development install and CI pin torch with constraints.txt
    pyproject = (repo / "pyproject.toml").read_text()
    assert f'verify = ["torch>={MIN_TORCH[0]}.{MIN_TORCH[1]}"]' in pyproject
    assert re.search(r"^torch==\d", (repo / "constraints.txt").read_text(), re.M)
    # the real command: a torch 2.0 distribution first on sys.path
    fake = tmp_path / "site" / "torch-2.0.1.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.0.1\n")
    result = subprocess.run(
        [sys.executable, "-m", "stabfix", "verify", str(repo / "tests" / "verify_cases" / "healthy")],
        capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": str(tmp_path / "site"),
                                               "COLUMNS": "200"}, timeout=600,
    )
    assert result.returncode == 2
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "torch >= 2.1" in result.stderr and "torch 2.0.1" in result.stderr
