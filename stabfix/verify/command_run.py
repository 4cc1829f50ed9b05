"""Parent side of `stabfix verify -- COMMAND`: start the user's unmodified command under the bootstrap,
read the per-process event files, enforce the timeout, leave no process behind.

`launch` is the general part (any command, any number of processes; the events of every process,
by rank); `run_command` turns rank 0's events into the `RunResult` that single-process verify reports.
The bootstrap folder goes first on PYTHONPATH, so every Python process the command starts, however
deep, loads `bootstrap/sitecustomize.py` (see event_files for the environment contract).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import stabfix
from stabfix.verify.event_files import EVENTS_DIR_ENV, SETTINGS_ENV, STABFIX_PATH_ENV, EventFolder
from stabfix.verify.proctree import alive
from stabfix.verify.runner import RunResult, _hang_stack, _signal_name, _take, _tail
from stabfix.verify.settings import Settings

BOOTSTRAP_DIR = str(Path(__file__).resolve().parent / "bootstrap")
_STABFIX_PARENT = str(Path(stabfix.__file__).resolve().parent.parent)
POLL_S = 0.1
GRACE_AFTER_DONE_S = 10.0


@dataclass
class Launch:
    """What the command's processes said and did."""

    events: dict[int, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)  # rank -> (pid, event)
    returncode: int | None = None
    timed_out: bool = False
    output: str = ""
    wall_s: float = 0.0
    pid: int | None = None  # the command's own process (torchrun, for --nproc-per-node)
    stopped_after_done: bool = False  # still running GRACE_AFTER_DONE_S after a process reported the end
    left_running: list[int] = field(default_factory=list)  # started processes alive after the end: none


def command_env(settings: Settings, project: Path, events_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([BOOTSTRAP_DIR] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env[EVENTS_DIR_ENV] = events_dir
    env[STABFIX_PATH_ENV] = _STABFIX_PARENT
    env[SETTINGS_ENV] = json.dumps({"steps": settings.steps, "warmup": settings.warmup, "seed": settings.seed,
                                    "exact_steps": settings.exact_steps, "project": str(project)})
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def launch(settings: Settings, project: Path, argv: list[str],
           on_event: Callable[[int, int, dict[str, Any]], None] | None = None,
           stack_pids: Callable[[], list[int]] | None = None) -> Launch:
    """Run `argv` in `project` until it exits, the timeout passes, or every process that reported
    steps is done (then it gets GRACE_AFTER_DONE_S to exit). The whole process group is killed at
    the end, so nothing the command started outlives it. On timeout the processes `stack_pids()`
    names (default: all of the group) dump their stacks first."""
    out = Launch()
    events_dir = tempfile.mkdtemp(prefix="stabfix-verify-events-")
    folder = EventFolder(Path(events_dir))
    out_file = tempfile.TemporaryFile()
    started = time.monotonic()
    deadline = started + settings.timeout
    try:
        try:
            proc = subprocess.Popen(argv, cwd=str(project), env=command_env(settings, project, events_dir),
                                    stdin=subprocess.DEVNULL, stdout=out_file, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            out.returncode = None
            out.output = f"could not start {argv[0]}: {exc.strerror or exc}"
            return out
        done_at: float | None = None
        started_pids: list[int] = []
        try:
            while True:
                exited = proc.poll() is not None
                for rank, pid, event in folder.poll():
                    out.events.setdefault(rank, []).append((pid, event))
                    if on_event is not None:
                        on_event(rank, pid, event)
                    if event.get("type") in ("done", "error") and done_at is None:
                        done_at = time.monotonic()
                if exited:
                    break
                now = time.monotonic()
                if now >= deadline:
                    out.timed_out = True
                    started_pids += _stop_group(proc, True, folder, stack_pids() if stack_pids else None)
                    break
                if done_at is not None and now - done_at > GRACE_AFTER_DONE_S:
                    out.stopped_after_done = True
                    break
                time.sleep(POLL_S)
        finally:
            started_pids += _stop_group(proc, out.stopped_after_done, folder)
        out.returncode = proc.returncode
        out.pid = proc.pid
        out.left_running = alive(sorted(set(started_pids) | event_pids(folder)))
    finally:
        out_file.seek(0)
        out.output = out_file.read().decode("utf-8", errors="replace")
        out_file.close()
        shutil.rmtree(events_dir, ignore_errors=True)
        out.wall_s = time.monotonic() - started
    return out


def run_command(settings: Settings, project: Path, on_event: Callable[[dict[str, Any]], None] | None = None) -> RunResult:
    """The single-process report: rank 0's events (the process that stepped an optimizer first)."""
    assert settings.run
    primary: list[int] = []

    def take(rank: int, pid: int, event: dict[str, Any]) -> None:
        if rank != 0:
            return
        if event.get("type") == "start" and not primary:
            primary.append(pid)
        if primary and pid != primary[0]:
            return
        if event.get("type") == "error" and result.error is not None \
                and result.error.get("time", 0) <= event.get("time", 0):
            return  # the first failure is the cause (a launcher raises after its worker died)
        if event.get("type") != "error":
            event = {k: v for k, v in event.items() if k != "time"}  # reports stay free of timestamps
        _take(result, event)
        if on_event is not None:
            on_event(event)

    result = RunResult()
    # on timeout, the stack of the training process only (not of its DataLoader workers)
    outcome = launch(settings, project, list(settings.run), take, stack_pids=lambda: primary[:])
    result.wall_s = outcome.wall_s
    result.output_tail = _tail(outcome.output)
    if outcome.returncode is None and not outcome.timed_out:
        result.error = {"kind": "crash", "phase": "start", "message": outcome.output, "traceback": None}
        return result
    where = _where(result)
    if outcome.timed_out:
        stack, rest = _hang_stack(outcome.output)
        result.output_tail = _tail(rest)
        result.error = {"kind": "timeout", "phase": where[0], "step": where[1],
                        "message": f"timed out after {settings.timeout:g}s (verify.timeout) {where[2]}",
                        "traceback": stack or None}
    elif result.error is not None:
        pass  # the command raised: its traceback came with the event
    elif result.done is None and outcome.returncode != 0:
        code = outcome.returncode
        how = f"was killed by {_signal_name(code)}" if code is not None and code < 0 else f"exited with code {code}"
        result.error = {"kind": "crash", "phase": where[0], "step": where[1],
                        "message": f"the command {how} {where[2]}", "traceback": None}
    elif not result.steps:
        result.error = {"kind": "no_steps", "phase": "command", "step": None, "traceback": None,
                        "message": "the command ended without calling optimizer.step() (verify's steps are "
                                   "optimizer steps)"}
    return result


def _where(result: RunResult) -> tuple[str, int | None, str]:
    if result.ready is None:
        return "command", None, "before the first optimizer step"
    step = len(result.steps) + 1
    return "step", step, f"during step {step}"


def event_pids(folder: EventFolder) -> set[int]:
    return {tail.pid for tail in folder.files.values()}


def _stop_group(proc: subprocess.Popen[bytes], dump_stack: bool, folder: EventFolder,
                stack_pids: list[int] | None = None) -> list[int]:
    """Ask the processes `stack_pids` names (none given: every process the command started) for their
    stacks (SIGUSR1, faulthandler), then kill them all: the group and every process below it, wherever
    it is (torchrun puts each worker in a session of its own), and any process that wrote events and was
    cut loose from the tree. Returns the pids that were found."""
    from stabfix.verify.proctree import descendants, kill_tree

    usr1 = getattr(signal, "SIGUSR1", None)
    if dump_stack and usr1 is not None and proc.poll() is None:
        for pid in stack_pids or [proc.pid, *descendants(proc.pid)]:
            try:
                os.kill(pid, usr1)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.5)
    found = kill_tree(proc.pid, sorted(event_pids(folder)), (EVENTS_DIR_ENV, str(folder.folder)))
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    return found
