"""Safety is proved by running: every fix of every rule runs on its bad examples before and after, in
float32, bfloat16 and float16 (tests/differential.py), and what the fix changes is compared.

- a fix the finding calls safe must leave every observed value, gradient and type bitwise equal (or
  within the `fix.bound_ulps` its rule page states); only the graph it cuts (`requires_grad` of the
  tensor it detaches) may differ;
- an unsafe fix must still run wherever the original ran (no fix may make a program raise); what it
  changes is listed in bench/README.md (`python tests/differential.py --table`);
- an example the CPU driver cannot reach the changed lines of is skipped with the reason, never passed.
"""

from __future__ import annotations

import pytest

from tests.differential import DTYPES, fixable_examples, judge, judge_example

CASES = [pytest.param(code, index, example, id=f"{code}-bad-{index}") for code, index, example in fixable_examples()]


@pytest.mark.parametrize("code,index,example", CASES)
def test_fix_keeps_what_it_claims_in_three_dtypes(code, index, example):
    verdict = judge_example(code, index, example)
    if verdict.status == "not-runnable":
        # a fix called safe must have run before and after: give its example a `run:` driver
        assert verdict.safety != "safe", f"a safe fix that never ran: {verdict.reason}"
        pytest.skip(f"not runnable on CPU (an unsafe fix): {verdict.reason}")
    if verdict.status == "same-program":
        return
    assert set(verdict.differences) == set(DTYPES), "every dtype ran"
    assert verdict.status != "broken", f"the fixed program raises where the original did not: {verdict.summary()}"
    if verdict.safety == "safe":
        keeps = verdict.status in ("equal", "within-bound") or verdict.graph_only()
        assert keeps, (
            f"{code}'s fix is labelled safe but changes what the program observes: {verdict.summary()}"
        )


@pytest.mark.parametrize("code,index,example", [case for case in CASES if case.values[2].run])
def test_an_example_with_its_own_driver_runs_through_its_fix(code, index, example):
    verdict = judge_example(code, index, example)
    assert verdict.status != "not-runnable", verdict.reason


# the harness itself: it must tell an equal rewrite from one that changes values, types, gradients or
# raises, and must refuse to judge a rewrite whose lines never ran

ORIGINAL = """\
import torch.nn.functional as F


def train(model, loader, optimizer):
    total = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
"""


def _judge(after: str, safety: str = "safe"):
    return judge("SF000", 0, "harness self-test", ORIGINAL, after, safety)


def test_harness_finds_an_equal_rewrite_equal():
    verdict = _judge(ORIGINAL.replace("total += loss.item()", "total = total + loss.item()"))
    assert verdict.status == "equal", verdict.summary()
    assert set(verdict.differences) == set(DTYPES)


def test_harness_sees_a_value_change_in_every_dtype():
    verdict = _judge(ORIGINAL.replace("F.mse_loss(model(x), y)", "F.mse_loss(model(x), y) * 1.01"))
    assert verdict.status == "differs"
    for dtype in DTYPES:
        assert any(d.kind == "value" and "model 0" in d.where for d in verdict.differences[dtype]), dtype


def test_harness_sees_a_tensor_turned_into_a_number_and_a_lost_gradient():
    verdict = _judge(ORIGINAL.replace("total += loss.item()", "total += loss").replace(
        "optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=False)"))
    kinds = {d.kind for d in verdict.differences["float32"]}
    assert "type" in kinds, verdict.summary()


def test_harness_reports_a_rewrite_that_raises_as_broken():
    verdict = _judge(ORIGINAL.replace("total += loss.item()", "total += loss.item() + undefined_helper()"),
                     safety="unsafe")
    assert verdict.status == "broken", verdict.summary()


def test_harness_refuses_to_judge_lines_it_never_ran():
    unreachable = ORIGINAL.replace("    return total\n", "    return total\n\n\nif False:\n    print(1)\n")
    verdict = judge("SF000", 0, "harness self-test", unreachable, unreachable.replace("print(1)", "print(2)"), "safe")
    assert verdict.status == "not-runnable"
    assert "not run through" in verdict.reason


def test_harness_enforces_a_stated_bound_in_units_in_the_last_place():
    nudged = ORIGINAL.replace("total += loss.item()", "total += loss.item() * (1 + 2**-22)")
    assert judge("SF000", 0, "harness self-test", ORIGINAL, nudged, "safe").status == "differs"
    assert judge("SF000", 0, "harness self-test", ORIGINAL, nudged, "safe", bound_ulps=8).status == "within-bound"
    assert judge("SF000", 0, "harness self-test", ORIGINAL, nudged, "safe", bound_ulps=0.5).status == "differs"


SCRIPT_LOADING_WEIGHTS = """\
import torch as th

from mynet import Net

model = Net()
model.load_state_dict(th.load(args.init_weights))
"""


def test_harness_gives_a_checkpoint_to_whatever_a_script_hands_torch_load_and_a_model_to_a_projects_net():
    # `args.init_weights` is a file because torch.load reads it, not because of its name; `Net()` from the
    # project's own (stubbed) module is a harness model, so the weights loaded into it are observed
    doubled = SCRIPT_LOADING_WEIGHTS.replace("th.load(args.init_weights)",
                                             "{k: v * 2 for k, v in th.load(args.init_weights).items()}")
    verdict = judge("SF000", 0, "harness self-test", SCRIPT_LOADING_WEIGHTS, doubled, "safe")
    assert verdict.status == "differs", verdict.reason
    assert any(d.kind == "value" and d.where.startswith("model 0") for d in verdict.differences["float32"])


def test_harness_runs_a_script_in_its_folder_where_a_file_it_names_exists():
    # a pickled policy read by a relative name (the last input profile holds whole modules), and a
    # relative write that is then observed among the run's files
    script = ('import torch\n\npolicy = torch.load("policy.pt", weights_only=False)\n'
              'torch.save(policy(torch.ones(1, 4)), "actions.pt")\n')
    verdict = judge("SF000", 0, "harness self-test", script, script.replace("torch.ones(1, 4))", "torch.ones(1, 4)) * 2"),
                    "safe")
    assert verdict.status == "differs", verdict.reason
    assert any(d.where == "file actions.pt" for d in verdict.differences["float32"]), verdict.summary()
