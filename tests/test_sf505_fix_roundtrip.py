"""SF505's fix on a real DataParallel (it wraps on CPU): the fixed program saves the same tensors under the
inner module's names, and that file loads strictly into the plain model, which the original's does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from torch import nn

PROGRAM = '''
import torch
import torch.nn as nn


def train(net, path):
    net = nn.DataParallel(net)
    out = net(torch.ones(3, 4)).sum()
    out.backward()
    torch.save({"epoch": 1, "model": net.state_dict()}, path)


torch.manual_seed(0)
train(nn.Linear(4, 2), OUT)
'''


def _run(source: str, out: Path) -> dict:
    namespace = {"OUT": str(out)}
    exec(compile(source, "<program>", "exec"), namespace)
    return torch.load(out, map_location="cpu")


def test_fixed_checkpoint_loads_into_the_plain_model(tmp_path):
    original = tmp_path / "train.py"
    original.write_text(PROGRAM, encoding="utf-8")
    fixed = tmp_path / "fixed.py"
    fixed.write_text(PROGRAM, encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "stabfix", "apply", "--unsafe-fixes", "--select", "SF505", str(fixed)],
                          cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": ""}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "net.module.state_dict()" in fixed.read_text(encoding="utf-8")

    before = _run(original.read_text(encoding="utf-8"), tmp_path / "before.pt")["model"]
    after = _run(fixed.read_text(encoding="utf-8"), tmp_path / "after.pt")["model"]
    assert sorted(before) == ["module.bias", "module.weight"]
    assert sorted(after) == ["bias", "weight"]
    for key, value in after.items():
        assert torch.equal(value, before["module." + key])  # the same tensors, renamed

    plain = nn.Linear(4, 2)
    plain.load_state_dict(after)  # strict: every key matches
    missing = plain.load_state_dict(before, strict=False)
    assert sorted(missing.missing_keys) == ["bias", "weight"]  # the original loads nothing
