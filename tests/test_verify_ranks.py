"""Cross-rank checks over synthetic per-rank step records (stabfix.verify.ranks), and the rank-side
digests they compare (stabfix.verify.replica)."""

import torch
from torch import nn

from stabfix.verify import replica
from stabfix.verify.ranks import compare_ranks, split_off

NAMES = ["0.weight", "0.bias", "scale"]


def _step(n, params=("a", "b", "c"), grads=("g", "h", "i"), batch=None, layout="L", sharded=False):
    sync = {"params": "|".join(params), "param_digests": list(params), "grads": "|".join(grads),
            "grad_digests": list(grads), "batch": batch, "layout": layout, "sharded": sharded}
    if n == 1:
        sync["names"] = NAMES
    return {"step": n, "sync": sync}


def _run(rank_steps, peaks=None):
    return {c["name"]: c for c in compare_ranks(rank_steps, peaks or {r: None for r in rank_steps})}


def test_ranks_in_sync_with_different_batches_pass():
    checks = _run({r: [_step(n, batch=f"r{r}s{n}") for n in (1, 2, 3)] for r in (0, 1)})
    assert {name: c["status"] for name, c in checks.items()} == {
        "gradients reduced": "pass", "parameters in sync": "pass", "different samples": "pass"}


def test_a_parameter_outside_ddp_names_the_rank_the_step_and_the_parameter():
    ranks = {0: [_step(n, batch=f"0-{n}") for n in (1, 2)],
             1: [_step(1, params=("a", "b", "X"), grads=("g", "h", "Y"), batch="1-1"),
                 _step(2, params=("a", "b", "Z"), grads=("g", "h", "W"), batch="1-2")]}
    checks = _run(ranks)
    assert checks["parameters in sync"]["status"] == "fail"
    assert checks["parameters in sync"]["ranks"] == [1] and checks["parameters in sync"]["step"] == 1
    assert checks["parameters in sync"]["parameters"] == ["scale"]
    assert "rank 1 differs from rank 0 (scale)" in checks["parameters in sync"]["message"]
    assert checks["gradients reduced"]["status"] == "fail"


def test_the_odd_rank_out_is_named_not_the_majority():
    ranks = {r: [_step(1, batch=str(r))] for r in (0, 1, 3)}
    ranks[2] = [_step(1, params=("a", "x", "c"), batch="2")]
    check = _run(ranks)["parameters in sync"]
    assert check["ranks"] == [2] and check["reference"] == [0, 1, 3]
    assert check["parameters"] == ["0.bias"]
    assert split_off({0: "x", 1: "y"}) == ([0], [1])  # a tie: rank 0's side is the reference


def test_same_batches_on_every_rank_fail_as_missing_sampler():
    check = _run({r: [_step(n, batch=f"same{n}") for n in (1, 2, 3)] for r in (0, 1)})["different samples"]
    assert check["status"] == "fail" and check["ranks"] == [0, 1] and check["steps"] == [1, 2, 3]
    assert "DistributedSampler" in check["message"]


def test_one_coincidence_among_many_steps_is_not_a_missing_sampler():
    ranks = {r: [_step(n, batch=f"r{r}s{n}") for n in range(1, 6)] for r in (0, 1)}
    ranks[1][2] = _step(3, batch="r0s3")
    assert _run(ranks)["different samples"]["status"] == "pass"


def test_sharded_or_differently_shaped_parameters_are_not_compared():
    sharded = _run({r: [_step(1, params=(str(r),) * 3, sharded=True, batch=str(r))] for r in (0, 1)})
    assert sharded["parameters in sync"]["status"] == "skip" and "FSDP" in sharded["parameters in sync"]["message"]
    split = _run({r: [_step(1, params=(str(r),) * 3, layout=f"L{r}", batch=str(r))] for r in (0, 1)})
    assert split["parameters in sync"]["status"] == "skip"
    assert "gradients reduced" not in split
    # tensor parallelism gives a group the same batch on purpose: a warning there, not a failure
    shared = _run({r: [_step(n, params=(str(r),) * 3, sharded=True, batch=f"b{n}") for n in (1, 2)] for r in (0, 1)})
    assert shared["different samples"]["status"] == "warn"


def test_an_epoch_replayed_in_the_same_order_warns():
    order = ["a", "b", "c", "a", "b", "c"]
    check = _run({r: [_step(n, batch=f"{r}{b}") for n, b in enumerate(order, 1)] for r in (0, 1)})["sample order"]
    assert check["status"] == "warn" and check["step"] == 4 and check["repeats_step"] == 1
    fresh = _run({r: [_step(n, batch=f"{r}{b}") for n, b in enumerate("abcbca", 1)] for r in (0, 1)})
    assert "sample order" not in fresh


def test_a_heavier_rank_is_named_and_near_equal_ranks_are_not():
    mib = 1 << 20
    steps = {r: [_step(1, batch=str(r))] for r in range(4)}
    heavy = _run(steps, {0: 300 * mib, 1: 200 * mib, 2: 201 * mib, 3: 199 * mib})["memory per rank"]
    assert heavy["status"] == "warn" and heavy["rank"] == 0 and "rank 0 peaks 1.50x" in heavy["message"]
    even = _run(steps, {0: 210 * mib, 1: 200 * mib, 2: 201 * mib, 3: 199 * mib})["memory per rank"]
    assert even["status"] == "pass"


def test_steps_only_some_ranks_reached_are_not_compared():
    ranks = {0: [_step(1, batch="x"), _step(2, batch="y")], 1: [_step(1, batch="z")]}
    assert _run(ranks)["parameters in sync"]["steps"] == 1


def test_digests_are_exact_for_cpu_and_device_paths(monkeypatch):
    a = torch.randn(1000)
    b = a.clone()
    b[777] = torch.nextafter(b[777], torch.tensor(float("inf")))  # one bit
    assert replica.digests([a])[0] == replica.digests([a.clone()])[0] != replica.digests([b])[0]
    assert replica.digests([None, torch.tensor(1.5), a.to(torch.bfloat16)])[0] == "-"
    monkeypatch.setattr(replica, "CHUNK_ELEMENTS", 64)  # the accelerator reduction, run here on CPU
    bits_a, bits_b = replica._raw_bits(a), replica._raw_bits(b)
    assert torch.equal(replica._device_sums(bits_a), replica._device_sums(replica._raw_bits(a.clone())))
    assert not torch.equal(replica._device_sums(bits_a), replica._device_sums(bits_b))
    swapped = a.clone()
    swapped[[1, 2]] = swapped[[2, 1]]  # same values, other places: the weighted sum tells
    assert not torch.equal(replica._device_sums(bits_a), replica._device_sums(replica._raw_bits(swapped)))


def test_replica_probe_records_outer_inputs_names_and_states():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    extra = nn.Parameter(torch.ones(1))
    optimizer = torch.optim.SGD([*model.parameters(), extra], lr=0.1)
    probe = replica.ReplicaProbe()
    probe.install()
    try:
        def step(x):
            optimizer.zero_grad()
            nn.MSELoss()(model(x) * extra, torch.zeros(2, 1)).backward()  # a loss module, called at top level
            optimizer.step()
            return probe.after_step(optimizer)

        x = torch.randn(2, 4)
        first = step(x)
        second = step(x.clone())
        third = step(x + 1)
    finally:
        probe.remove()
    assert first["names"] == ["0.weight", "0.bias", "2.weight", "2.bias", "optimizer parameter #4 [1] (in no module)"]
    assert "names" not in second
    # the same data gives the same batch digest although the parameters (so the loss's inputs) changed
    assert first["batch"] == second["batch"] != third["batch"]
    assert first["params"] != second["params"] and len(first["param_digests"]) == 5
    assert first["layout"] == second["layout"] and first["sharded"] is False
    assert replica.BatchRecorder().take() is None
