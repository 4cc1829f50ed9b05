"""`stabfix verify -- python script.py` on unmodified training scripts of three frameworks.

The scripts in tests/verify_scripts/ are written as their users write them (a Hugging Face `Trainer`
with gradient accumulation and clipping, a Lightning `Trainer.fit` with automatic optimization, an
accelerate loop with `accelerator.backward`), with tiny models built from code or configs and
generated data, so they run offline in seconds. Each framework gets the user's whole round trip, as
real `python -m stabfix verify` runs:
1. a planted leak (the user's code keeps every loss tensor in a list) fails the run, and the report
   names the list and the user's line that made the tensors;
2. the script as committed, unmodified (the fix: `.item()`), passes with `--baseline` pointing at
   the first run's report, and its steps are the framework's real optimizer steps.

The libraries are installed by the `test` extra (pinned in constraints.txt); a module is skipped
only where one of them is not importable.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "verify_scripts"
STEPS = 6


@dataclass
class Run:
    code: int
    out: str
    report: dict
    report_path: Path


def verify(project: Path, script: str, *script_args: str, baseline: Path | None = None) -> Run:
    report_path = project / f"{Path(script).stem}.report.json"
    flags = ["--steps", str(STEPS), "--json", str(report_path)]
    if baseline is not None:
        flags += ["--baseline", str(baseline)]
    # offline: the models are built from configs and nothing may be downloaded; one intra-op thread
    # because these steps are tiny and OpenMP threads spin-waiting on a busy machine slow them 10x
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONHASHSEED": "0", "COLUMNS": "160", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "stabfix", "verify", str(project), *flags, "--", sys.executable, script, *script_args],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )
    assert report_path.exists(), done.stdout + done.stderr
    return Run(done.returncode, done.stdout + done.stderr, json.loads(report_path.read_text()), report_path)


def plant_leak(project: Path, script: str, kept: str, leaky: str) -> Path:
    """A copy of the script whose one line keeps the loss tensor instead of its value."""
    source = (SCRIPTS / script).read_text()
    assert source.count(kept) == 1, kept
    path = project / f"leaky_{script}"
    path.write_text(source.replace(kept, leaky))
    return path


def line_of(path: Path, text: str) -> int:
    [number] = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def check_clean_run(run: Run, before: Run) -> None:
    """The unmodified script passed, stabfix stopped it after STEPS optimizer steps, every step has a
    finite loss and gradient norm (step 1 included), and the baseline comparison shows the fix."""
    assert run.code == 0, run.out
    report = run.report
    assert report["status"] == "ok"
    assert report["command"]["stopped_by_stabfix"] is True
    assert report["command"]["steps_seen"] == STEPS
    steps = report["steps"]
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    for step in steps:
        assert step["optimizer_steps"] == 1
        assert math.isfinite(step["loss"]) and math.isfinite(step["grad_norm"]) and step["grad_norm"] > 0
        assert step["none_grads_count"] == 0
    # nothing grows, and no step counts stabfix's own references (a frame's copy of the loop's
    # locals, a cycle through the holder search) as the user's memory: sampled and exact steps agree
    assert report["summary"]["growth_bytes_per_step"] == 0
    assert len({s["live_end_bytes"] for s in steps[report["settings"]["warmup"]:]}) == 1, [s["live_end_bytes"] for s in steps]
    # no false alarm: every check passes, and every trainable parameter is in the optimizer
    assert [c["name"] for c in report["checks"] if c["status"] != "pass"] == []
    assert report["params"]["trainable_not_in_optimizer"] == 0 and report["params"]["trainable"] > 0
    # the before/after comparison against the leaky run's report
    assert report["baseline"]["ref"] == str(before.report_path)
    rows = {row["metric"]: row for row in report["comparison"]}
    assert rows["growth_bytes_per_step"]["baseline"] > 0 and rows["growth_bytes_per_step"]["current"] <= 0
    assert "before/after" in run.out


def check_leak_caught(run: Run, script: Path, holder: str, created_at: str) -> None:
    assert run.code == 1, run.out
    report = run.report
    assert report["status"] == "failed"
    growth = next(c for c in report["checks"] if c["name"] == "memory growth")
    assert growth["status"] == "fail"
    # the tensors kept by 2+ steps (a framework may keep a one-off tensor, made once, besides)
    [leak] = [group for group in report["survivors"] if group["steps"] >= 2]
    assert leak["holders"] == [holder]
    assert (leak["file"], leak["line"]) == (script.name, line_of(script, created_at))
    assert f"held by {holder}" in growth["message"] and f"{script.name}:{leak['line']}" in growth["message"]


def check_clipping(run: Run, max_norm: float, must_cut: bool = True) -> None:
    """Every step's gradient norm is the clipped one, min(norm before clipping, max_norm), and the
    norm before clipping is reported (with the clip) for every step."""
    steps = run.report["steps"]
    for step in steps:
        before = step["grad_norm_before_clip"]
        assert step["clip_max_norm"] == max_norm
        assert step["grad_norm"] == pytest.approx(min(before, max_norm), rel=1e-4)
    cut = [s for s in steps if s["grad_norm_before_clip"] > max_norm]
    summary = run.report["summary"]
    assert summary["clipped_steps"] == len(cut) and summary["clip_seen_steps"] == len(steps)
    assert summary["grad_norm_before_clip_max"] == max(s["grad_norm_before_clip"] for s in steps)
    assert bool(cut) == must_cut
    assert "before clipping (max)" in run.out


def needs(*modules: str) -> None:
    """Skip where a framework is not installed (found without importing it: the runs import it in
    their own processes, and importing transformers or lightning here would cost seconds)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (the test extra installs it, pinned in constraints.txt)")


def round_trip(tmp_path: Path, script: str, kept: str, leaky: str, holder: str, created_at: str,
               *script_args: str) -> tuple[Run, Run]:
    clean = tmp_path / script
    shutil.copyfile(SCRIPTS / script, clean)
    leaky_script = plant_leak(tmp_path, script, kept, leaky)
    before = verify(tmp_path, leaky_script.name, *script_args)
    check_leak_caught(before, leaky_script, holder, created_at)
    after = verify(tmp_path, clean.name, *script_args, baseline=before.report_path)
    check_clean_run(after, before)
    assert clean.read_bytes() == (SCRIPTS / script).read_bytes()  # verified as committed
    return before, after


def test_hugging_face_trainer_train(tmp_path):
    needs("transformers", "accelerate")
    _, after = round_trip(
        tmp_path, "hf_trainer_finetune.py",
        kept="self.batch_losses.append(loss.item())", leaky="self.batch_losses.append(loss)",
        holder="LoggingTrainer.batch_losses",
        # the loss is made inside transformers; the user's line is the call into it
        created_at="super().compute_loss(",
    )
    # Trainer clips (max_grad_norm=1.0, through accelerate's get_total_norm + clip_grads_with_norm_)
    # before optimizer.step(): verify reads the gradients the optimizer consumes, and keeps the
    # norm before clipping beside them
    check_clipping(after, max_norm=1.0)
    assert after.report["environment"]["argv"][0] == "hf_trainer_finetune.py"


def test_lightning_trainer_fit(tmp_path):
    needs("lightning")
    _, after = round_trip(
        tmp_path, "lightning_fit.py",
        kept="self.train_losses.append(loss.item())", leaky="self.train_losses.append(loss)",
        holder="Regressor.train_losses",
        created_at="loss = nn.functional.mse_loss(",
    )
    # automatic optimization is optimizer.step(closure): the closure runs training_step and backward
    # inside the step, and step 1's gradients are those its closure made (not "no gradient yet")
    first = after.report["steps"][0]
    assert first["params_with_grad"] == 6  # every parameter tensor of the 3-layer MLP
    # gradient_clip_val=1.0 clips inside the closure; these gradients stay below it
    check_clipping(after, max_norm=1.0, must_cut=False)


def test_accelerate_loop(tmp_path):
    needs("accelerate")
    before, after = round_trip(
        tmp_path, "accelerate_loop.py",
        kept="history.append(loss.item())", leaky="history.append(loss)",
        holder="local history in main()",
        created_at="loss = nn.functional.cross_entropy(",
    )
    # accelerator.accumulate with 2 micro-batches per optimizer step: AcceleratedOptimizer.step()
    # skips the inner step on the first micro-batch, so each verify step holds two micro-batches;
    # the leak keeps both losses of a step (2 x 4 bytes)
    assert before.report["summary"]["growth_bytes_per_step"] == 8
    assert after.report["steps"][0]["optimizer_steps"] == 1
    check_clipping(after, max_norm=1.0)
