"""What `stabfix verify` tells the user when something is off: the fallback estimate's peak, a bad
flag, a baseline that cannot run, the traceback of the user's code (issue 20, items 4.8 and 4.10-4.12)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest
from test_verify_estimate import DYNAMIC
from test_verify_run import cli

from stabfix.verify.settings import FlagError, SettingsError, resolve_settings

TINY = textwrap.dedent(
    """
    import torch


    def build_verify(device):
        model = torch.nn.Linear(4, 4).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(2, 4, device=device)

        def step():
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        return model, opt, step
    """
)


def test_fallback_estimate_names_the_step_of_its_peak(tmp_path):
    """4.8: the extrapolated estimate says in which phase and which step (cold/steady) the peak is, never "None"."""
    (tmp_path / "dyn.py").write_text(DYNAMIC)
    r = cli([str(tmp_path), "--estimate", "--entry", "dyn:build"], json_path=tmp_path / "e.json")
    assert r.code == 0, r.out + r.err
    est = r.report["estimate"]
    assert est["label"] == "estimate(extrapolated)"
    assert est["peak_step"] in ("cold", "steady")
    line = next(line for line in r.out.splitlines() if "predicted peak" in line)
    assert "None" not in line
    assert f"(in {est['peak_phase']}, {est['peak_step']} step)" in line


@pytest.mark.parametrize("flags, needle", [
    (["--budget", "peak_mb=3"], "--budget: unknown budget 'peak_mb'"),
    (["--budget", "grad_norm=lots"], "--budget grad_norm must be a number, got 'lots'"),
    (["--budget", "grad_norm"], "--budget expects KEY=VALUE"),
    (["--entry", "train"], "--entry must look like 'module:function', got 'train'"),
    (["--steps", "0"], "--steps must be >= 1, got 0"),
])
def test_a_bad_flag_is_blamed_on_the_flag_not_the_config(tmp_path, flags, needle):
    """4.10: with a valid stabfix.yaml, a bad flag's error names the flag and not the file."""
    (tmp_path / "stabfix.yaml").write_text("verify:\n  entry: train:build_verify\n")
    r = cli([str(tmp_path), *flags])
    assert r.code == 2
    assert needle in r.err
    assert "stabfix.yaml" not in r.err
    assert "Traceback" not in r.err


def test_a_bad_config_value_is_still_blamed_on_the_config(tmp_path):
    (tmp_path / "stabfix.yaml").write_text("verify:\n  entry: train\n")
    r = cli([str(tmp_path), "--steps", "3"])
    assert r.code == 2 and "stabfix.yaml: verify.entry must look like 'module:function'" in r.err
    with pytest.raises(SettingsError) as info:
        resolve_settings({"entry": "a:b", "steps": 3}, {"warmup": 5})
    assert isinstance(info.value, FlagError) and "--warmup (5) must be smaller than verify.steps (3)" in str(info.value)
    with pytest.raises(SettingsError) as info:
        resolve_settings({"entry": "a:b", "steps": 0}, {"warmup": 0})
    assert not isinstance(info.value, FlagError) and "verify.steps must be >= 1" in str(info.value)


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=600)


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "stabfix.yaml").write_text("verify:\n  entry: train:build_verify\n  steps: 3\n  warmup: 1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "config only")
    return tmp_path


def test_baseline_ref_without_the_untracked_entry_file_is_an_error(repo):
    """4.11: the glue file is untracked, so HEAD's checkout lacks it: say so and exit 2, no table of n/a."""
    (repo / "proj" / "train.py").write_text(TINY)
    r = cli(["proj", "--baseline", "HEAD"], cwd=repo)
    assert r.code == 2, r.out + r.err
    assert "baseline HEAD cannot run" in r.err
    assert "proj/train.py is untracked in git" in r.err
    assert "before/after" not in r.out and "n/a" not in r.out
    assert _git(repo, "worktree", "list", "--porcelain").stdout.count("worktree ") == 1


def test_baseline_that_fails_to_run_is_an_error_not_a_comparison(repo, tmp_path_factory):
    """4.11: any baseline run that could not run gives exit 2 and says why, instead of all-"n/a" rows."""
    (repo / "proj" / "train.py").write_text("raise RuntimeError('old code is broken')\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "broken")
    (repo / "proj" / "train.py").write_text(TINY)
    out = tmp_path_factory.mktemp("out") / "r.json"
    r = cli(["proj", "--baseline", "HEAD"], cwd=repo, json_path=out)
    assert r.code == 2, r.out + r.err
    assert "no before/after comparison" in r.out and "old code is broken" in r.out
    assert "n/a" not in r.out
    assert r.report["exit_code"] == 2 and r.report["comparison"] == []
    assert r.report["baseline"]["report"]["error"]["message"].endswith("RuntimeError: old code is broken")


HELPER = """
def load_shard(n):
    raise FileNotFoundError(f"shard {n} is missing")
"""

IMPORTS_HELPER = """
from helper import load_shard

DATA = load_shard(7)


def build_verify(device):
    raise AssertionError("not reached")
"""


def test_traceback_starts_at_the_users_first_frame(tmp_path):
    """4.12: an error while importing the entry shows the user's frames only, not importlib's."""
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(IMPORTS_HELPER)
    r = cli([str(tmp_path), "--entry", "train:build_verify"])
    assert r.code == 2, r.out + r.err
    section = r.out.split("traceback from your code", 1)[1]
    frames = [line.strip() for line in section.splitlines() if line.strip().startswith("File ")]
    assert frames[0].startswith(f'File "{tmp_path / "train.py"}", line 4, in <module>'), section
    assert frames[1].startswith(f'File "{tmp_path / "helper.py"}", line 3, in load_shard'), section
    assert len(frames) == 2
    assert "importlib" not in section and "stabfix" not in section
    assert "FileNotFoundError: shard 7 is missing" in section


def test_traceback_of_a_nested_import_has_no_import_machinery(tmp_path):
    """4.12: frames of the import system between two user frames are dropped too."""
    (tmp_path / "helper.py").write_text("raise KeyError('vocab')\n")
    (tmp_path / "train.py").write_text("import helper\n\n\ndef build_verify(device):\n    pass\n")
    r = cli([str(tmp_path), "--entry", "train:build_verify"])
    section = r.out.split("traceback from your code", 1)[1]
    frames = [line.strip() for line in section.splitlines() if line.strip().startswith("File ")]
    assert [f.split(",")[0] for f in frames] == [f'File "{tmp_path / "train.py"}"', f'File "{tmp_path / "helper.py"}"']
