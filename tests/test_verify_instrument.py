"""The child's instrumentation, in process (imports torch): phases, probes, deliberate -inf masks."""

from __future__ import annotations

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
