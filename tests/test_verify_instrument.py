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
