import os
import subprocess
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Commands whose whole work happens in the `stabfix` process itself: run in the test process they give the
# same exit code, stdout and stderr as `python -m stabfix` does, without a fresh interpreter importing
# libcst and every rule for each call (about 1.5 s of CPU a call; the suite makes hundreds).
# `verify` starts the user's training and handles signals, `server` speaks LSP over stdin: those always
# get a real process, as does any call that changes the interpreter's environment (`env=`) or asks for
# worker processes (a fork from an xdist worker, which has threads, is what once deadlocked CI).
IN_PROCESS_COMMANDS = frozenset({"scan", "apply", "rules", "explain"})


def _needs_a_process(args: tuple[str, ...], env: dict | None) -> bool:
    if env:
        return True
    command = next((arg for arg in args if not arg.startswith("-")), None)
    if command is not None and command not in IN_PROCESS_COMMANDS:
        return True
    for index, arg in enumerate(args):
        if arg in ("--jobs", "-j") and args[index + 1:index + 2] != ("1",):
            return True
        if arg.startswith(("--jobs=", "-j")) and arg not in ("-j", "--jobs=1", "-j1"):
            return True
    return False


@contextmanager
def _working_directory(cwd: Path):
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def run_cli_in_process(args: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess:
    """`python -m stabfix ARGS` in this process: what the process would print and exit with. An exception
    that escapes the command is a traceback on stderr and exit 1, as the interpreter would make it."""
    from typer.testing import CliRunner

    from stabfix import scan_runner
    from stabfix.cli import app

    default_jobs = scan_runner.default_jobs
    scan_runner.default_jobs = lambda: 1  # no worker processes forked from the test process
    try:
        with _working_directory(cwd):
            result = CliRunner().invoke(app, list(args), prog_name="python -m stabfix")
    finally:
        scan_runner.default_jobs = default_jobs
    stderr, code = result.stderr, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(result.exception)[1:])
        code = 1
    return subprocess.CompletedProcess([sys.executable, "-m", "stabfix", *args], code, result.stdout, stderr)


def run_cli_process(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m stabfix ARGS` in a process of its own, as users and CI scripts run it."""
    full_env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "stabfix", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=600,
    )


@pytest.fixture
def run_cli():
    """Run the CLI as users and CI scripts do: its exit code, stdout and stderr. In this process where
    that gives the same answer (see IN_PROCESS_COMMANDS), otherwise in a real `python -m stabfix`."""

    def run(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        if _needs_a_process(args, env):
            return run_cli_process(*args, cwd=cwd, env=env)
        return run_cli_in_process(args, cwd or REPO)

    return run


@pytest.fixture
def run_cli_in_a_process():
    """Always a real `python -m stabfix` process: for what only a process shows (the entry point,
    interpreter start-up, a fresh import state)."""
    return run_cli_process

# red-team cases and fixtures are programs to scan, never test modules (some are named `*_test.py`)
collect_ignore_glob = ["redteam/*"]

# Modules whose module fixture is expensive and shared by several tests (2-rank torchrun runs, the
# action's virtualenv, verify runs), collected first. pytest-xdist's default `load` schedule hands each
# worker a first batch of an eighth of the tests, consecutive in collection order: at the front, each of
# these modules runs whole on one worker, its fixture made once, and its runs (partly waits on hang
# timeouts) overlap the other worker's short tests. Collected last, as their names sort, they fell into
# the small batches at the end: split over both workers, every fixture was made twice, at the end of the
# run where nothing else was left to overlap. Only the order changes; pytest-xdist is not needed for it.
SHARED_FIXTURES_FIRST = (
    "test_verify_torchrun.py", "test_fixture_ddp_trainer.py", "test_action.py", "test_verify_plot.py",
    "test_verify_baseline.py",
)


def _start_rank(item: pytest.Item) -> int:
    name = item.path.name
    return SHARED_FIXTURES_FIRST.index(name) if name in SHARED_FIXTURES_FIRST else len(SHARED_FIXTURES_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_start_rank)  # stable: each module's tests stay together and in their order
