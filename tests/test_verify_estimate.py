"""`stabfix verify --estimate`: fake-tensor estimates equal real CPU peaks, the report's contract,
the real-CPU fallback, settings and the GPU catalog. No GPU needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from test_verify_run import REPO, cli

from stabfix.verify.gpus import lookup
from stabfix.verify.settings import GIB, FlagError, SettingsError, resolve_estimate

# Fake (kernels as the CPU runs them) vs a real CPU run of the same step, both counted by verify's
# live-tensor tracker (without verify's gradient/numerics probes), cold and steady step.
COMPARE = textwrap.dedent("""
    import contextlib, gc, json, sys
    from pathlib import Path
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from stabfix.verify import child, estimate_steps as es
    from stabfix.verify.instrument import all_tensors

    def real(project, entry_name):
        entry = child._load_entry(entry_name, project)
        child._seed_everything(0)
        m, o, step = child._unpack(entry(torch.device("cpu")))
        tracker = es._make_tracker()
        gc.collect(); tracker.register_existing(all_tensors())
        hooks = es._optimizer_hooks(tracker)
        peaks = []
        for i in (1, 2):
            tracker.begin_step(i)
            with tracker:
                step()
            peaks.append(tracker.step_peak)
        for h in hooks: h.remove()
        del m, o, step; gc.collect()
        return peaks

    out = {}
    for project, entry_name in json.loads(sys.argv[1]):
        project = Path(project); sys.path.insert(0, str(project))
        sys.modules.pop(entry_name.partition(":")[0], None)
        r = real(project, entry_name)
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        built = es.build(child._load_entry(entry_name, project), entry_name, 0, mode, {})
        f = es.run_steps(built, mode, "cpu", snapshot=False)
        out[str(project.name)] = {"real": r, "fake": [f["cold_step"]["peak_bytes"], f["steady_step"]["peak_bytes"]]}
        sys.path.remove(str(project))
        del built, f, mode; gc.collect()
    print(json.dumps(out))
""")

CASES = [
    ("tests/verify_cases/healthy", "train:build_verify"),
    ("fixtures/entropy_probe", "offline_entropy_probe:build_verify"),
]  # recurrent_lm and classic_pitfalls are equal too (bench/estimate_fixtures.py); left out for speed


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "COLUMNS": "160"}


TIED = """
import torch
from torch import nn


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.mix = nn.Linear(32, 32)
        self.head = nn.Linear(32, 100, bias=False)
        self.head.weight = self.embed.weight        # tied: one parameter, counted once
        self.register_buffer("scale", torch.ones(32))


def build(device):
    model = TiedLM().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 100, (4, 16), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        h = torch.tanh(model.mix(model.embed(ids) * model.scale))
        loss = nn.functional.cross_entropy(model.head(h).flatten(0, 1), ids.flatten())
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step
"""


def test_fake_estimate_equals_real_cpu_peak(tmp_path):
    """At the fixtures' sizes the fake step's peak equals the real CPU step's within 1% (exact for
    entropy_probe, 213,028 / 263,644 bytes cold / steady, and a tied-weights LM; healthy's CPU mse_loss
    returns its 0-d loss in a 256-byte storage, which fake tensors count as 4 bytes)."""
    (tmp_path / "tied_lm.py").write_text(TIED)
    arg = json.dumps([[str(REPO / p), e] for p, e in CASES] + [[str(tmp_path), "tied_lm:build"]])
    done = subprocess.run([sys.executable, "-c", COMPARE, arg], capture_output=True, text=True, env=_env(),
                          cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["entropy_probe"]["fake"] == [213028, 263644]
    assert out[tmp_path.name]["fake"] == out[tmp_path.name]["real"]  # tied weights stayed tied
    for name, got in out.items():
        for real, fake in zip(got["real"], got["fake"]):
            assert abs(fake - real) <= 0.01 * real, (name, got)


def _report_keys(est: dict) -> None:
    for key in ("label", "peak_bytes", "peak_phase", "breakdown", "device_memory_bytes", "fits", "variants",
                "largest", "assumptions"):
        assert key in est
    assert set(est["breakdown"]) == {"parameters", "gradients", "optimizer_state", "activations",
                                     "non_tensor_margin"}
    assert all(isinstance(v, int) for v in est["breakdown"].values())
    assert sum(est["breakdown"].values()) == est["peak_bytes"]
    for row in est["largest"]:
        assert set(row) == {"bytes", "shape", "dtype", "module"}
    for v in est["variants"]:
        assert {"name", "peak_bytes", "computed"} <= set(v) and v["peak_bytes"] > 0


def test_cli_estimate_over_device_memory(tmp_path):
    """Over the device memory: exit 1, the report under `estimate`, the variants computed."""
    r = cli(["tests/verify_cases/healthy", "--estimate", "--device-memory-gb", "0.5"], json_path=tmp_path / "e.json")
    assert r.code == 1, r.out + r.err
    est = r.report["estimate"]
    _report_keys(est)
    assert est["label"] == "estimate(fake)" and est["fits"] is False
    assert est["device_memory_bytes"] == GIB // 2
    assert est["tensor_peak_bytes"] == 150576  # the healthy step's steady peak, backward
    assert est["peak_phase"] == "backward"
    assert est["breakdown"]["parameters"] == 25348 and est["breakdown"]["optimizer_state"] == 50720
    names = [v["name"] for v in est["variants"]]
    assert names[:2] == ["bf16 autocast", "fused optimizer"]
    assert any(v["computed"] for v in est["variants"]) and "ZeRO-3/FSDP across 8 GPUs" in names
    assert "does not fit" in r.out and "estimate(fake)" in r.out
    skipped = {v["name"] for v in est["variants_skipped"]}
    assert {"activation checkpointing", "half micro-batch", "adapters only"} <= skipped  # an MLP, no batch_size
    assert any("parameter body.2.weight" == row["module"] for row in est["largest"])


DYNAMIC = """
import torch
from torch import nn


def build(device, batch_size=8):
    model = nn.Linear(16, 16).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(batch_size, 16, device=device)

    def step():
        opt.zero_grad()
        out = model(x)
        kept = out[out > 0]          # data-dependent shape: fake tensors cannot run it
        loss = kept.sum() + out.pow(2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step


def broken(device, batch_size=8):
    model, opt, step = build(device, batch_size)

    def bad():
        step()
        raise ValueError("boom")

    return model, opt, bad
"""


def test_fallback_extrapolates_when_fake_mode_fails(tmp_path):
    (tmp_path / "dyn.py").write_text(DYNAMIC)
    r = cli([str(tmp_path), "--estimate", "--estimate-entry", "dyn:build", "--entry", "dyn:build",
             "--gpu", "t4"], json_path=tmp_path / "e.json")
    assert r.code == 0, r.out + r.err
    est = r.report["estimate"]
    _report_keys(est)
    assert est["label"] == "estimate(extrapolated)"
    assert "nonzero" in (est["fake_error"]["op"] or "") or "nonzero" in est["fake_error"]["message"]
    assert est["fake_error"]["where"].endswith("dyn.py:14")
    assert [p["batch_size"] for p in est["points"]] == [1, 2, 4]
    assert "fake tensors could not run" in r.out and "dyn.py:14" in r.out

    both = cli([str(tmp_path), "--estimate", "--entry", "dyn:broken"], json_path=tmp_path / "b.json")
    assert both.code == 2, both.out + both.err
    assert both.report["estimate"] is None and "boom" in both.report["error"]["message"]


def test_resolve_estimate_flags_override_config():
    est = resolve_estimate({"entry": "big:build", "device_memory_gb": 40}, {})
    assert est.entry == "big:build" and est.device_memory_bytes == 40 * GIB and est.gpu is None
    est = resolve_estimate({"device_memory_gb": 40}, {"gpu": "h100-80gb"})
    assert est.gpu == "NVIDIA H100 80GB" and est.device_memory_bytes == 80 * GIB
    est = resolve_estimate({"gpu": "a100-40gb"}, {"device_memory_gb": 24, "entry": "x:y"})
    assert est.device_memory_bytes == 24 * GIB and est.gpu is None and est.entry == "x:y"
    assert resolve_estimate(None, {}).device_memory_bytes is None
    with pytest.raises(SettingsError, match="verify.estimate.gpu: unknown GPU 'h900'") as config_error:
        resolve_estimate({"gpu": "h900"}, {})
    assert not isinstance(config_error.value, FlagError)  # the command prefixes the config file's path
    with pytest.raises(FlagError, match="--gpu: unknown GPU 'h900'"):
        resolve_estimate({"gpu": "h100-80gb"}, {"gpu": "h900"})
    with pytest.raises(FlagError, match="--device-memory-gb must be > 0"):
        resolve_estimate({}, {"device_memory_gb": -3})
    with pytest.raises(SettingsError, match="unknown key 'memory'"):
        resolve_estimate({"memory": 3}, {})
    with pytest.raises(SettingsError, match="module:function"):
        resolve_estimate({"entry": "nofunction"}, {})


def test_gpu_catalog_names():
    assert lookup("H100")[0] == "h100-80gb"
    assert lookup("rtx4090-24gb")[2] == 24 * GIB
    assert lookup("nvidia-a100-40gb")[0] == "a100-40gb"
    assert lookup("tpu-v5") is None


def test_estimate_key_is_accepted_by_verify_settings():
    from stabfix.verify.settings import resolve_settings

    s = resolve_settings({"entry": "a:b", "estimate": {"device_memory_gb": 8}}, {})
    assert s.entry == "a:b"


HF = """
import torch


def build(device, batch_size=2):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         attn_implementation="sdpa")
    model = LlamaForCausalLM(config).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 128, (batch_size, 32), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step
"""


def test_hf_model_from_config(tmp_path):
    """A transformers model built from a config (no weights, no download) estimates under fake tensors."""
    pytest.importorskip("transformers")
    (tmp_path / "hf_entry.py").write_text(HF)
    r = cli([str(tmp_path), "--estimate", "--entry", "hf_entry:build", "--gpu", "l4"], json_path=tmp_path / "e.json")
    assert r.code == 0, r.out + r.err
    est = r.report["estimate"]
    assert est["label"] == "estimate(fake)" and est["fits"] is True
    state, params = est["breakdown"]["optimizer_state"], est["params"]["bytes"]
    assert 2 * params <= state < 2 * params + 4096  # exp_avg, exp_avg_sq + a 4-byte step per tensor
    assert any("scaled_dot_product_attention" in a for a in est["assumptions"])
