"""`stabfix verify` on what a trial on public training code found wrong (issue 20, items 4.1, 4.2, 4.3,
4.6, 4.7, 4.14): each test runs the real CLI on a small project and asserts what the user reads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from test_verify_run import REPO, cli

from test_verify_estimate import _env


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
