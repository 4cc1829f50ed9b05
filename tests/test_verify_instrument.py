"""The child's instrumentation, in process (imports torch): phases, probes, deliberate -inf masks."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from stabfix.verify.instrument import Instrumentation  # noqa: E402

MIB = 1024 * 1024


class Masker(torch.nn.Module):
    """Outputs -inf on purpose (an additive attention mask): not a numerical failure."""

    def forward(self, x):
        return torch.where(x > 0, x, torch.full_like(x, float("-inf")))


def test_phases_grads_and_deliberate_masks():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Masker())
    unused = torch.nn.Linear(4, 4)
    both = torch.nn.ModuleDict({"model": model, "unused": unused})
    opt = torch.optim.SGD(both.parameters(), lr=1e-3)
    x = torch.randn(8, 4)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = torch.where(torch.isinf(out), torch.zeros_like(out), out).sum()
        big = torch.ones(MIB // 4)  # 1 MiB forward temporary
        loss = loss + big[0] * 0
        del big
        loss.backward()
        opt.step()
        return loss.detach()

    inst = Instrumentation([("", both)], torch.device("cpu"))
    inst.install()
    try:
        records = [inst.run_step(i, step, warmup=i == 1) for i in (1, 2, 3)]
    finally:
        inst.remove()
    r = records[-1]
    assert r["phase_peak_bytes"]["forward"] - r["start_live_bytes"] >= MIB
    assert r["phase_peak_bytes"]["backward"] < r["start_live_bytes"] + MIB  # the temporary is gone by then
    assert r["none_grads"] == ["unused.weight", "unused.bias"]
    assert r["nonfinite_module"] is None and r["nonfinite_grads_count"] == 0
    assert "model.1" in inst.probes.benign and inst.probes.benign["model.1"]["value"] == "-Inf"
    assert r["grad_norm"] > 0 and r["top_params"][0][0].startswith("model.0.")
    assert records[0]["live_end_bytes"] == records[2]["live_end_bytes"]


class Amplify(torch.nn.Module):
    """Finite until `fail_at`, then overflows to inf (the culprit a NaN hunt must name)."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.fail_at = 3

    def forward(self, x):
        self.calls += 1
        return x * (1e39 if self.calls >= self.fail_at else 1.0)


def _deliberate_mask_then_overflow(defer: bool):
    """Linear -> Masker (-inf on purpose every step) -> Amplify (inf from step 3) -> Linear; the loss
    ignores the masked entries, so it is finite on steps 1-2 and not from step 3. Outputs: 128 bytes
    each, the last one 256."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Masker(), Amplify(), torch.nn.Linear(4, 8))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 4)

    def step():
        opt.zero_grad(set_to_none=True)
        h = model[1](model[0](x))
        out = model[3](model[2](torch.where(torch.isinf(h), torch.zeros_like(h), h)))
        loss = out.pow(2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    try:
        return [inst.run_step(i, step, warmup=i == 1, exact=False, defer_checks=defer and i > 1)
                for i in (1, 2, 3)], inst.probes
    finally:
        inst.remove()


@pytest.mark.parametrize("limits", [{}, {"MAX_HELD_BYTES": 1}, {"MAX_HELD_BYTES": 300}])
def test_deferred_checks_name_the_same_first_module(monkeypatch, limits):
    from stabfix.verify import probes as probes_module

    eager, eager_probes = _deliberate_mask_then_overflow(defer=False)
    for name, value in limits.items():  # past a limit outputs are checked at once: same answer
        monkeypatch.setattr(probes_module, name, value)
    deferred, deferred_probes = _deliberate_mask_then_overflow(defer=True)
    # the mask was learnt on step 1 (checked as it came) and is not blamed on step 3
    assert "1" in deferred_probes.benign and deferred_probes.benign["1"]["value"] == "-Inf"
    assert not math.isfinite(deferred[2]["loss"])
    # the culprit, not the later output it made non-finite (MAX_HELD_BYTES 300: two outputs are kept,
    # the third goes past the limit, the three are checked then and the last as it comes)
    culprit = deferred[2]["nonfinite_module"]
    assert culprit is not None and culprit["module"] == "2" and culprit["type"] == "Amplify"
    assert culprit == eager[2]["nonfinite_module"]
    assert deferred_probes.first_nonfinite == eager_probes.first_nonfinite
    # a healthy deferred step checks only what a limit made it check at once
    expected = 0 if not limits else eager[1]["modules_checked"]
    assert deferred[1]["modules_checked"] == expected
    assert deferred[2]["modules_checked"] == eager[2]["modules_checked"] > 0


class _Store:
    shared = [torch.zeros(3)]  # a class attribute

    def __init__(self):
        self.cache = {"a": {"b": torch.zeros(5)}}
        self.last = torch.zeros(7)


class _WithBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.zeros(11))


GLOBAL_LIST = [torch.zeros(13)]


def test_holders_are_named():
    import gc

    from stabfix.verify.holders import find_holders

    store, module = _Store(), _WithBuffer()
    kept = [torch.zeros(17)]

    def closure():
        return kept

    targets = {
        "dict-in-dict attribute": store.cache["a"]["b"],
        "attribute": store.last,
        "class attribute": _Store.shared[0],
        "buffer": module.running,
        "module global": GLOBAL_LIST[0],
        "closure": kept[0],
    }
    gc.collect()
    found = find_holders({name: {id(t.untyped_storage())} for name, t in targets.items()})
    holders = {name: found[name]["holders"] for name in targets}
    assert holders["dict-in-dict attribute"] == ["_Store.cache"]
    assert found["dict-in-dict attribute"]["paths"] == ["_Store.cache['a']['b']"]
    assert holders["attribute"] == ["_Store.last"]
    assert holders["class attribute"] == ["_Store.shared"]
    assert holders["buffer"] == ["_WithBuffer.running"]
    assert holders["module global"] == [f"{__name__}.GLOBAL_LIST"]
    assert holders["closure"] and "closure kept" in holders["closure"][0]
    assert closure() is kept


def test_optimizer_state_is_created_at_the_users_step_line():
    import inspect

    from stabfix.verify.tracker import OPTIMIZER

    model = torch.nn.Linear(4, 4)
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(2, 4)
    lines = {}

    def step():
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        lines["step"] = inspect.currentframe().f_lineno + 1
        opt.step()
        return loss.detach()

    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    try:
        inst.run_step(1, step, warmup=True, exact=True)
    finally:
        inst.remove()
    state = [r for r in inst.tracker.survivors(1, 1) if r.info[1] == OPTIMIZER]
    assert len(state) == 6  # Adam: step, exp_avg, exp_avg_sq for weight and bias
    assert {r.info[3][1:] for r in state} == {(lines["step"], "step")}
    assert inst.tracker._optimizer_frame is None  # no frame is kept past optimizer.step()


def test_a_tensor_made_inside_an_installed_package_is_attributed_to_the_users_calling_line(tmp_path, monkeypatch):
    """A framework (transformers, lightning, ...) creates the loss inside its own code; the line to
    change is the user's frame that called into it, not the installed package's."""
    import inspect
    import sys

    packages = tmp_path / "lib" / "site-packages"
    (packages / "fakeframework").mkdir(parents=True)
    (packages / "fakeframework" / "__init__.py").write_text(
        "def compute_loss(model, x):\n"
        "    return model(x).square().mean()\n"
    )
    monkeypatch.syspath_prepend(str(packages))
    sys.modules.pop("fakeframework", None)
    import fakeframework

    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 4)
    kept = []
    lines = {}

    def step():
        opt.zero_grad()
        lines["call"] = inspect.currentframe().f_lineno + 1
        loss = fakeframework.compute_loss(model, x)
        loss.backward()
        opt.step()
        kept.append(loss)  # the planted leak: the loss tensor outlives the step
        return loss.detach()

    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    try:
        inst.run_step(1, step, warmup=True, exact=True)
    finally:
        inst.remove()
    loss_storage = kept[0].untyped_storage()
    [ref] = [r for r in inst.tracker.survivors(1, 1) if r() is not None and r() is loss_storage]
    assert ref.info[3] == (__file__, lines["call"], "step")


def test_a_running_functions_local_list_is_named_as_the_holder():
    """`stabfix verify -- python train.py` looks for holders while the user's `main()` is still on
    the stack: a `losses` list local to it is the holder to name, not "holder not found"."""
    import gc

    from stabfix.verify.holders import find_holders

    def training_loop():
        losses = []
        for _ in range(3):
            losses.append(torch.ones(5, requires_grad=True).sum())
        gc.collect()
        return find_holders({"kept": {id(losses[1].untyped_storage())}})

    found = training_loop()["kept"]
    assert found["holders"] == ["local losses in test_a_running_functions_local_list_is_named_as_the_holder.<locals>.training_loop()"]
    assert found["paths"] == ["losses[1] (local in test_a_running_functions_local_list_is_named_as_the_holder.<locals>.training_loop())"]
