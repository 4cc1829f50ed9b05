"""Issue 20, items 4.4 and 4.5, in the build_verify mode (tests/verify_cases/optimizer_steps): an
`optimizer.step(closure)` is read after the closure has computed the gradients, and with several
optimizer steps per verify step every one of them is checked (budget and non-finite), not the last.
Both failed before: LBFGS had no grad norm at step 1, its backward counted as optimizer and its
parameters reported unused; a spike or a NaN in an earlier PPO minibatch step passed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.test_verify_command import Run, verify

CASE = "tests/verify_cases/optimizer_steps"
COMMON = ["--steps", "4", "--warmup", "1", "--exact-steps", "all", "--budget", "grad_norm=50"]


class _LazyRuns(dict):
    """Each entry's run starts when its test asks for it (under xdist, on that test's worker only)."""

    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out = out

    def __missing__(self, entry: str) -> Run:
        run = self[entry] = verify([CASE, "--entry", f"train:{entry}", *COMMON], self.out / f"{entry}.json")
        return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return _LazyRuns(tmp_path_factory.mktemp("optimizer_steps"))


def _check(report: dict, name: str) -> dict | None:
    return next((c for c in report["checks"] if c["name"] == name), None)


def test_closure_gradients_are_read_after_the_closure_ran(runs: dict[str, Run]) -> None:
    r = runs["lbfgs"]
    assert r.code == 0, r.out + r.err
    steps = r.report["steps"]
    assert steps[0]["grad_norm"] is not None and steps[0]["grad_norm"] > 0
    assert steps[0]["none_grads_count"] == 0
    assert _check(r.report, "unused parameters") is None
    for s in steps:
        assert len(s["grad_norms"]) == 4  # max_iter=4: four closure evaluations, each one checked
        assert s["phase_peak_bytes"]["forward"] and s["phase_peak_bytes"]["backward"]


def test_a_spike_in_an_earlier_optimizer_step_fails_the_budget(runs: dict[str, Run]) -> None:
    r = runs["ppo_spike"]
    assert r.code == 1, r.out + r.err
    over = _check(r.report, "grad norm")
    assert over["status"] == "fail" and over["step"] == 1
    first = r.report["steps"][0]
    assert len(first["grad_norms"]) == 4 and first["grad_norm"] == max(first["grad_norms"])
    assert first["grad_norms"][0] > 50 > first["grad_norms"][-1]


def test_a_nan_gradient_in_an_earlier_optimizer_step_fails(runs: dict[str, Run]) -> None:
    r = runs["ppo_nan"]
    assert r.code == 1, r.out + r.err
    grads = _check(r.report, "gradients")
    assert grads["status"] == "fail" and grads["step"] == 1
    assert "critic.weight" in grads["message"]
    first = r.report["steps"][0]
    assert first["grad_norms"][0] == "NaN" and math.isfinite(first["grad_norms"][1])
