import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def run_cli():
    """Run the installed CLI in a subprocess, as users and CI scripts do."""

    def run(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        full_env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", "stabfix", *args],
            cwd=cwd or REPO,
            capture_output=True,
            text=True,
            env=full_env,
            timeout=600,
        )

    return run

# red-team cases and fixtures are programs to scan, never test modules (some are named `*_test.py`)
collect_ignore_glob = ["redteam/*"]
