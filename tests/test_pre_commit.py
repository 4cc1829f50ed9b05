"""The pre-commit hooks for real: `pre-commit try-repo <this repo>` on a temporary git repository.

pre-commit builds the hook's environment from this repository's path (no git remote); it needs
only the package registries, like `pip install .` does. Both hooks run in one try-repo call, so the
environment is built once (a second call from a working tree with uncommitted changes would build
another: pre-commit snapshots them into a new shadow repository each time)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from stabfix.catalog import load_catalog

from helpers import CLEAN_SOURCE, SF101_FIXED, SF101_SOURCE, write

REPO = Path(__file__).resolve().parent.parent


def _pre_commit() -> list[str]:
    found = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "pre_commit"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=600)


def test_hooks_are_declared_like_ruffs_pair():
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"stabfix", "stabfix-apply"}
    assert hooks["stabfix"]["entry"] == "stabfix scan" and hooks["stabfix-apply"]["entry"] == "stabfix apply --exit-zero"
    assert all(hook["language"] == "python" and hook["types_or"] == ["python", "pyi", "jupyter"] for hook in hooks.values())


def test_pre_commit_try_repo_runs_both_hooks(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    write(project, "train.py", SF101_SOURCE)
    write(project, "ok.py", CLEAN_SOURCE)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PRE_COMMIT_COLOR": "never",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    first = subprocess.run(
        [*_pre_commit(), "try-repo", str(REPO), "--all-files"],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "stabfix" in output and "SF101" in output, output
    assert "files were modified by this hook" in output, output
    assert (project / "train.py").read_text() == SF101_FIXED, "the apply hook wrote the safe fix"
    assert (project / "ok.py").read_text() == CLEAN_SOURCE
    assert "Failed" in output and output.count("stabfix") >= 2, output


def test_readme_pins_the_hooks_and_the_action_to_this_release():
    from stabfix import __version__

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pre_commit = readme[readme.index("### pre-commit"):readme.index("### GitHub Actions")]
    assert f"rev: v{__version__} " in pre_commit and "rev: main" not in pre_commit
    assert f"uses: stabfix/stabfix@v{__version__}\n" in readme


def test_the_apply_hook_fails_only_by_changing_files(tmp_path):
    """pre-commit fails a hook that exits non-zero or modifies files; the apply hook exits 0, so it
    fails exactly when it wrote a fix, and findings it cannot fix are the scan hook's to report."""
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    entry = hooks["stabfix-apply"]["entry"].split()
    assert entry[0] == "stabfix"
    unfixable = write(tmp_path, "loader.py", load_catalog()["SF412"].bad[0].code)
    fixable = write(tmp_path, "train.py", SF101_SOURCE)

    def hook(*files: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "stabfix", *entry[1:], *map(str, files)],
                              capture_output=True, text=True, timeout=600)

    before = unfixable.read_text()
    untouched = hook(unfixable)
    assert untouched.returncode == 0 and unfixable.read_text() == before, untouched.stdout + untouched.stderr
    changed = hook(fixable, unfixable)
    assert changed.returncode == 0 and fixable.read_text() == SF101_FIXED, changed.stdout + changed.stderr
    scan = subprocess.run([sys.executable, "-m", "stabfix", *hooks["stabfix"]["entry"].split()[1:], str(unfixable)],
                          capture_output=True, text=True, timeout=600)
    assert scan.returncode == 1 and "SF412" in scan.stdout, "what the apply hook leaves, the scan hook reports"
