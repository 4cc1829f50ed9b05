"""`stabfix verify` on what a trial on public training code found wrong (issue 20, items 4.1, 4.2, 4.3,
4.6, 4.7, 4.14): each test runs the real CLI on a small project and asserts what the user reads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from test_verify_estimate import _env
from test_verify_run import REPO, cli


def _project(tmp_path, source: str, name: str = "train") -> str:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    return str(tmp_path)


def _check(report: dict, name: str) -> dict:
    return next(c for c in report["checks"] if c["name"] == name)


# -- 4.2: the --estimate fallback counts nothing of the failed fake attempt --------------------------
DYNAMIC = """
    import torch
    from torch import nn


    def build(device, batch_size=8):
        model = nn.Sequential(nn.Linear(256, 256), nn.Linear(256, 16)).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        x = torch.randn(batch_size, 256, device=device)

        def step():
            opt.zero_grad()
            out = model(x)
            kept = out[out > 0]          # data-dependent shape: fake tensors cannot run it
            loss = kept.sum() + out.pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return model, opt, step
"""

MEASURE_ALONE = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from stabfix.verify import child, estimate_fallback
    entry = child._load_entry("dyn:build", Path(sys.argv[1]))
    print(json.dumps([estimate_fallback._measure(entry, 0, {"batch_size": b})["phases"] for b in (1, 2, 4)]))
""")


def test_estimate_fallback_counts_nothing_of_the_fake_attempt(tmp_path):
    """The fallback's real CPU steps measure what the same steps measure in a process where no fake
    attempt ran (before: the fake model, optimizer and step tensors, kept alive by the fake attempt's
    traceback, were counted as live memory: +296,640 bytes at every batch size here)."""
    project = _project(tmp_path, DYNAMIC, "dyn")
    r = cli([project, "--estimate", "--entry", "dyn:build", "--gpu", "t4"], json_path=tmp_path / "e.json")
    assert r.code == 0, r.out + r.err
    est = r.report["estimate"]
    assert est["label"] == "estimate(extrapolated)"
    alone = subprocess.run([sys.executable, "-c", MEASURE_ALONE, project], capture_output=True, text=True,
                           env=_env(), cwd=REPO, timeout=300)
    assert alone.returncode == 0, alone.stderr[-3000:]
    expected = json.loads(alone.stdout.strip().splitlines()[-1])
    assert [p["phase_peak_bytes"] for p in est["points"]] == expected


# -- 4.1: an optimizer the user's code drops is not kept alive by verify -------------------------------
FRESH_OPTIMIZER = """
    import torch
    from torch import nn


    def build(device):
        model = nn.Linear(128, 128).to(device)
        x = torch.randn(8, 128, device=device)

        def step():
            # a framework that builds its optimizer per fit (one fit per step): the old one and its
            # state are dropped
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return model, step
"""


def test_dropped_optimizers_are_not_kept_alive(tmp_path):
    """Before: verify held every optimizer that ever stepped, and reported its state as the user's
    leak ("memory grows every step ... held by Adam.state")."""
    r = cli([_project(tmp_path, FRESH_OPTIMIZER), "--entry", "train:build", "--steps", "6"],
            json_path=tmp_path / "r.json")
    assert r.code == 0, r.out + r.err
    growth = _check(r.report, "memory growth")
    assert growth["status"] == "pass", growth
    assert "Adam.state" not in r.out
    assert not any("Adam.state" in h for g in r.report["survivors"] for h in g["holders"])
    steps = r.report["steps"]
    assert steps[-1]["live_end_bytes"] == steps[2]["live_end_bytes"]  # flat after warm-up
    assert all(s["grad_norm"] is not None for s in steps)  # the optimizers were still seen stepping


# -- 4.7: parameters in no optimizer: a target network is said to be one, a forgotten head is warned --
TARGET_NETWORK = """
    import torch
    from torch import nn


    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.online = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
            self.target = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))  # requires_grad left on
            self.aux = nn.Linear(8, 1)


    def _agent(device):
        agent = Agent().to(device)
        agent.target.load_state_dict(agent.online.state_dict())
        opt = torch.optim.SGD(agent.online.parameters(), lr=0.01)
        return agent, opt, torch.randn(32, 8, device=device)


    def dqn(device):
        agent, opt, x = _agent(device)

        def step():
            opt.zero_grad()
            with torch.no_grad():
                target_q = agent.target(x).max(1).values
            loss = (agent.online(x).max(1).values - target_q).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return agent, opt, step


    def forgotten_head(device):
        agent, opt, x = _agent(device)

        def step():
            opt.zero_grad()
            loss = agent.online(x).pow(2).mean() + agent.aux(x).pow(2).mean()  # aux gets gradients
            loss.backward()
            opt.step()
            return loss.detach()

        return agent, opt, step
"""


def test_target_network_is_not_said_to_get_gradients(tmp_path):
    """Before: "N trainable parameter values are in no optimizer (they get gradients but are never
    updated)", a warning, for a target network that never gets a gradient, and no module named."""
    project = _project(tmp_path, TARGET_NETWORK)
    r = cli([project, "--entry", "train:dqn", "--steps", "4"], json_path=tmp_path / "dqn.json")
    assert r.code == 0, r.out + r.err
    coverage = [c for c in r.report["checks"] if c["name"] == "optimizer coverage"]
    assert coverage and all(c["status"] == "pass" for c in coverage)
    messages = " ".join(c["message"] for c in coverage)
    assert "get no gradient" in messages and "target, aux" in messages
    assert "get gradients" not in messages and "get gradients" not in r.out
    params = r.report["params"]
    assert params["not_in_optimizer_with_grad"] == 0
    target_and_aux = 8 * 16 + 16 + 16 * 4 + 4 + 9
    assert params["not_in_optimizer_without_grad"] == params["trainable_not_in_optimizer"] == target_and_aux
    assert params["not_in_optimizer_modules"] == {"with_grad": [], "without_grad": ["target", "aux"]}

    r = cli([project, "--entry", "train:forgotten_head", "--steps", "4"], json_path=tmp_path / "head.json")
    assert r.code == 0, r.out + r.err
    warned = next(c for c in r.report["checks"] if c["name"] == "optimizer coverage" and c["status"] == "warn")
    assert warned["message"].startswith("9 trainable parameter values get gradients but are in no optimizer")
    assert warned["message"].endswith(": aux") and warned["modules"] == ["aux"]
    assert "aux" in r.out


# -- 4.3: a run too short to judge growth never passes it ---------------------------------------------
def test_short_run_fails_on_measured_growth_and_never_says_no_growth(tmp_path):
    """Before: with 2 steps after warm-up the 1 MiB/step leak passed as "no steady growth after
    warm-up (slope +1.00 MiB/step)"."""
    leaky = _check(cli(["tests/verify_cases/leaky", "--steps", "4"], json_path=tmp_path / "l.json").report,
                   "memory growth")
    assert leaky["status"] == "fail" and leaky["judged"] is False
    assert leaky["message"].startswith("memory grew +1.00 MiB/step over only 2 step(s) after warm-up (steps 3-4)")
    assert "--steps 5" in leaky["message"] and "held by History._kept" in leaky["message"]

    r = cli(["tests/verify_cases/leaky", "--steps", "3"], json_path=tmp_path / "one.json")
    one = _check(r.report, "memory growth")
    assert one["status"] == "warn" and one["message"].startswith("growth not judged: only 1 step(s) after warm-up")
    assert "no steady growth" not in r.out


# -- 4.6: the module named first non-finite is the one whose own computation made the value ------------
NAN_IN_ATTENTION = """
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, width, masked_from_step):
            super().__init__()
            self.q = nn.Linear(width, width)
            self.drop = nn.Dropout(0.1)
            self.masked_from_step = masked_from_step
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            scores = self.q(x) @ x.transpose(-1, -2)
            if self.calls >= self.masked_from_step:  # every key masked: the softmax of a row of -inf is NaN
                scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool), float("-inf"))
            return self.drop(scores.softmax(-1)) @ x  # Dropout is the first module to output the NaN


    def _build(device, masked_from_step, data_nan=False):
        model = nn.Sequential(nn.Linear(8, 8), Attention(8, masked_from_step), nn.Linear(8, 1)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 6, 8, device=device)
        if data_nan:
            x[0, 0, 0] = float("nan")

        def step():
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return model, opt, step


    def at_step_1(device):   # module outputs checked as they come
        return _build(device, 1)


    def at_step_4(device):   # a sampled step: outputs kept, checked once the loss is NaN
        return _build(device, 4)


    def nan_data(device):
        return _build(device, 10**9, data_nan=True)


    class MaskedAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(8, 8)
            self.drop = nn.Dropout(0.1)

        def forward(self, x, mask):  # an additive -inf mask comes in as an input
            return self.drop((self.q(x) @ x.transpose(-1, -2) + mask).softmax(-1)) @ x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.attn, self.out = nn.Linear(8, 8), MaskedAttention(), nn.Linear(8, 1)

        def forward(self, x, mask):
            return self.out(self.attn(self.inp(x), mask))


    def masked_row(device):
        model = Net().to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 6, 8, device=device)
        mask = torch.zeros(6, 6, device=device)
        mask[0, :] = float("-inf")  # a query that may attend to nothing: its softmax row is NaN

        def step():
            opt.zero_grad()
            loss = model(x, mask).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return model, opt, step
"""


def test_first_nonfinite_module_is_the_one_that_made_it(tmp_path):
    """Before: "first non-finite output (NaN): module 1.drop (Dropout)", a Dropout handed a NaN that
    its parent's softmax made."""
    project = _project(tmp_path, NAN_IN_ATTENTION)
    for entry, step in (("at_step_1", 1), ("at_step_4", 4)):
        r = cli([project, "--entry", f"train:{entry}", "--steps", "6"], json_path=tmp_path / f"{entry}.json")
        assert r.code == 1, r.out + r.err
        numerics = _check(r.report, "numerics")
        assert numerics["status"] == "fail" and numerics["module"] == "1", numerics
        assert numerics["message"] == (f"first non-finite output (NaN): module 1 (Attention) at step {step}; "
                                       "its own computation made it (its inputs had no NaN)")
        assert "Dropout" not in r.out

    # the softmax inside `attn` made the NaN out of a -inf that came in with an input: attn is named
    r = cli([project, "--entry", "train:masked_row", "--steps", "4"], json_path=tmp_path / "mask.json")
    numerics = _check(r.report, "numerics")
    assert numerics["module"] == "attn" and numerics["input_nonfinite"] is False, numerics

    r = cli([project, "--entry", "train:nan_data", "--steps", "4"], json_path=tmp_path / "data.json")
    numerics = _check(r.report, "numerics")
    assert numerics["module"] == "0" and numerics["input_nonfinite"] is True
    assert "its input was already non-finite and no module made it" in numerics["message"]


# -- 4.14: what is alive before step 1 besides the models is named ------------------------------------
KEPT_COPIES = """
    import copy

    import torch
    from torch import nn


    class EMA:
        def __init__(self, model):
            self.shadow = copy.deepcopy(model)  # a full copy of the model, updated after every step


    class Loop:
        def __init__(self, model):
            self.model = model
            self.ema = EMA(model)
            self.initial = copy.deepcopy(model)  # a framework's copy of the model to restore from


    class Images:
        def __init__(self):
            self.pixels = torch.randn(512, 256)  # 512 KiB of data, all in memory


    def build(device):
        model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 128)).to(device)
        loop = Loop(model)
        data = Images()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            loss = loop.model(data.pixels[:8].to(device)).pow(2).mean()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for e, p in zip(loop.ema.shadow.parameters(), model.parameters()):
                    e.lerp_(p, 0.01)
            return loss.detach()

        return model, opt, step
"""


def test_live_before_step_1_names_the_largest_other_holders(tmp_path):
    """Before: "live before step 1 | 1.64 MiB | model parameters+buffers 385.50 KiB" and nothing on the
    other 1.26 MiB."""
    r = cli([_project(tmp_path, KEPT_COPIES), "--entry", "train:build", "--steps", "3"], json_path=tmp_path / "r.json")
    assert r.code == 0, r.out + r.err
    model = 256 * 256 * 4 + 256 * 4 + 256 * 128 * 4 + 128 * 4
    summary = r.report["summary"]
    assert summary["model_state_bytes"] == model
    holders = summary["live_before_holders"]
    assert [(h["holder"], h["kind"], h["type"], h["bytes"]) for h in holders] == [
        ("Images.pixels", "tensors", None, 512 * 256 * 4),
        ("EMA.shadow", "module", "Sequential", model),
        ("Loop.initial", "module", "Sequential", model),
    ]
    row = next(line for line in r.out.splitlines() if "live before step 1" in line)
    assert "Images.pixels 512.00 KiB" in row and "EMA.shadow 385.50 KiB" in row
