"""`stabfix verify --baseline`: a git ref (temporary worktree) or a saved --json report.

Uses a throw-away git repository under tmp_path; the project sits in a subfolder so that the PATH
mapping into the worktree is exercised.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest
from test_verify_run import cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

TRAIN = textwrap.dedent(
    '''
    import torch

    CACHE = []


    def build_verify(device):
        model = torch.nn.Linear(16, 16).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x = torch.randn(8, 16, device=device)

        def step():
            opt.zero_grad(set_to_none=True)
            out = model(x)
            loss = out.pow(2).mean()
            loss.backward()
            opt.step()
            CACHE.append(torch.zeros(64 * 1024, device=device))  # 256 KiB kept per step: the leak
            return loss.detach()

        return model, opt, step
    '''
)


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=600)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("baseline_repo")
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    proj = root / "proj"
    proj.mkdir()
    (proj / "stabfix.yaml").write_text("verify:\n  entry: train:build_verify\n  steps: 6\n  warmup: 1\n")
    (proj / "train.py").write_text(TRAIN)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "leaky")
    # the working tree fixes the leak
    (proj / "train.py").write_text(TRAIN.replace("CACHE.append(", "_ = ("))
    return root


@pytest.fixture(scope="module")
def git_run(repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("baseline_out") / "report.json"
    return cli(["proj", "--baseline", "HEAD"], cwd=repo, json_path=out), out


def test_baseline_git_ref_compares_before_and_after(repo, git_run):
    r, _ = git_run
    assert r.code == 0, r.out + r.err  # the working tree is healthy
    assert "baseline HEAD" in r.out and "before/after: HEAD → working tree" in r.out
    rows = {row["metric"]: row for row in r.report["comparison"]}
    assert rows["growth_bytes_per_step"]["verdict"] == "better"
    assert rows["growth_bytes_per_step"]["baseline"] == pytest.approx(256 * 1024, rel=0.01)
    assert rows["live_end_bytes"]["verdict"] == "better"
    assert rows["failed_checks"]["baseline"] == 1 and rows["failed_checks"]["current"] == 0
    assert rows["trainable_params"]["verdict"] == "same"
    base = r.report["baseline"]["report"]
    assert base["exit_code"] == 1 and base["project"].endswith("@ HEAD")
    # the temporary worktree is gone
    listing = git(repo, "worktree", "list", "--porcelain").stdout
    assert listing.count("worktree ") == 1


def test_baseline_saved_report(git_run, tmp_path):
    _, fixed_report = git_run  # the healthy working tree's --json report
    leaky = tmp_path / "leaky"
    leaky.mkdir()
    (leaky / "stabfix.yaml").write_text("verify:\n  entry: train:build_verify\n  steps: 6\n  warmup: 1\n")
    (leaky / "train.py").write_text(TRAIN)
    r = cli([str(leaky), "--baseline", str(fixed_report)])
    assert r.code == 1, r.out + r.err  # the leaky project fails its own checks
    assert "saved report" in r.out and "before/after" in r.out
    growth = next(line for line in r.out.splitlines() if "memory growth (per step)" in line)
    assert "worse" in growth


def test_bad_baselines(repo, tmp_path):
    r = cli(["proj", "--baseline", "no-such-ref"], cwd=repo)
    assert r.code == 2 and "git ref 'no-such-ref' not found" in r.err
    r = cli(["proj", "--baseline", str(tmp_path / "missing.json")], cwd=repo)
    assert r.code == 2 and "does not exist" in r.err
    outside = tmp_path / "not_a_repo"
    outside.mkdir()
    (outside / "stabfix.yaml").write_text("verify:\n  entry: train:build_verify\n")
    r = cli([str(outside), "--baseline", "HEAD"])
    assert r.code == 2 and "not inside a git repository" in r.err
