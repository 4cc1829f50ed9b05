"""`stabfix verify --nproc-per-node N -- python train.py`: run the command on N local ranks through
torchrun, then give each rank its own run (events, how it ended) and say what happened to the ones
that did not finish: a rank that died (its exception, or torchrun's exit code for it), one that hung
(where it was stuck, from its stack dump), one that torchrun stopped because another rank failed.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from stabfix.verify.command_run import launch
from stabfix.verify.runner import RunResult, _signal_name, _tail, _take
from stabfix.verify.settings import Settings
from stabfix.verify.torchrun import last_stack, rank_stderr_files, stack_text, torchrun_command, where_stuck

# torchrun's failure summary: "rank : 1 (local_rank: 1)" then "exitcode : 1 (pid: 7815)"
_FAILURE = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*\n\s*exitcode\s*:\s*(-?\d+)")
_ROOT_CAUSE = re.compile(r"Root Cause \(first observed failure\):\s*\n\[\d+\]:\s*\n(?:.*\n)*?\s*rank\s*:\s*(\d+)")


@dataclass
class RankRuns:
    runs: dict[int, RunResult] = field(default_factory=dict)  # rank -> its run (its worker's events)
    states: dict[int, dict[str, Any]] = field(default_factory=dict)  # rank -> how it ended
    argv: list[str] = field(default_factory=list)  # the torchrun command that ran
    timed_out: bool = False
    returncode: int | None = None
    output_tail: str = ""
    left_running: list[int] = field(default_factory=list)  # pids still alive after the run (should be none)
    root_rank: int | None = None  # torchrun's "first observed failure"


def run_ranks(settings: Settings, project: Path, nproc: int,
              on_event: Callable[[int, dict[str, Any]], None] | None = None) -> RankRuns:
    assert settings.run
    out = RankRuns()
    log_dir = Path(tempfile.mkdtemp(prefix="stabfix-verify-torchrun-"))
    try:
        out.argv = torchrun_command(list(settings.run), nproc, log_dir)
        primary: dict[int, int] = {}  # rank -> the pid of its worker (the process that sent `start`)
        by_pid: dict[int, list[dict[str, Any]]] = {}
        ranks_of: dict[int, int] = {}

        def take(rank: int, pid: int, event: dict[str, Any]) -> None:
            by_pid.setdefault(pid, []).append(event)
            ranks_of[pid] = rank
            if event.get("type") == "start":
                primary.setdefault(rank, pid)
            if primary.get(rank) == pid and on_event is not None:
                on_event(rank, event)

        outcome = launch(settings, project, out.argv, take)
        out.timed_out = outcome.timed_out
        out.returncode = outcome.returncode
        out.output_tail = _tail(outcome.output)
        out.left_running = list(getattr(outcome, "left_running", []) or [])
        stacks = {rank: last_stack(path.read_text(errors="replace"))
                  for rank, path in rank_stderr_files(log_dir).items()}
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    launcher_pid = getattr(outcome, "pid", None)
    for pid, events in by_pid.items():
        rank = ranks_of[pid]
        if pid == launcher_pid or (rank in primary and primary[rank] != pid):
            continue  # torchrun itself (no RANK), or a DataLoader worker forked from a rank
        run = out.runs.setdefault(rank, RunResult())
        for event in events:
            _take(run, event)
    exit_codes = {int(r): int(c) for r, c in _FAILURE.findall(outcome.output)}
    root = _ROOT_CAUSE.search(outcome.output)
    root_rank = out.root_rank = int(root.group(1)) if root else None
    for rank in range(nproc):
        run = out.runs.setdefault(rank, RunResult())
        run.wall_s = outcome.wall_s
        stuck = (f"timed out after {settings.timeout:g}s (verify.timeout)" if out.timed_out else
                 "still running after the other ranks had finished" if outcome.stopped_after_done else None)
        out.states[rank] = _state(rank, run, stuck, stacks.get(rank, []), exit_codes.get(rank), root_rank)
        out.states[rank]["pid"] = primary.get(rank)
        if out.states[rank]["state"] != "ok" and run.error is None:
            run.error = {"kind": out.states[rank]["kind"], "phase": "step" if run.ready else "command",
                         "step": out.states[rank]["step"], "message": out.states[rank]["message"],
                         "traceback": out.states[rank].get("stack")}
        run.output_tail = out.output_tail if run.error else ""
    return out


def _state(rank: int, run: RunResult, stuck: str | None, frames: list[dict[str, Any]],
           exit_code: int | None, root_rank: int | None) -> dict[str, Any]:
    """How one rank ended: ok, died, hung (`stuck` says why the run was stopped while it ran), stopped
    (by torchrun, after another rank failed) or ended (by itself, before `steps`)."""
    step = len(run.steps) + 1 if run.ready is not None else None
    where = f"in step {step}" if step else "before its first optimizer step"
    base = {"rank": rank, "step": step, "steps_done": len(run.steps)}
    if run.done is not None:
        stopped = bool(run.done.get("stopped_by_stabfix"))
        return {**base, "state": "ok" if stopped else "ended", "kind": None, "step": None,
                "message": f"stopped by stabfix after {len(run.steps)} step(s)" if stopped
                else f"ended by itself after {len(run.steps)} step(s)"}
    if run.error is not None:
        after = f" (after rank {root_rank} failed first)" if root_rank is not None and root_rank != rank else ""
        return {**base, "state": "died", "kind": run.error.get("kind", "exception"),
                "message": f"rank {rank}: {run.error.get('message')}{after}", "stack": run.error.get("traceback"),
                "first_failure": root_rank == rank}
    if stuck:
        at = where_stuck(frames) if frames else "an unknown place (no stack dump)"
        return {**base, "state": "hung", "kind": "timeout",
                "message": f"rank {rank} hung {where} at {at}; {stuck}",
                "stack": ("Stack of the stuck rank (most recent call last):\n" + stack_text(frames)) if frames else None}
    if exit_code is not None and exit_code < 0 and root_rank is not None and root_rank != rank:
        return {**base, "state": "stopped", "kind": "stopped",
                "message": f"rank {rank} was stopped by torchrun ({_signal_name(exit_code)}) {where}, after rank "
                           f"{root_rank} failed"}
    how = ("was killed by " + _signal_name(exit_code) if exit_code is not None and exit_code < 0
           else f"exited with code {exit_code}" if exit_code is not None else "ended without a report")
    return {**base, "state": "died", "kind": "crash", "message": f"rank {rank} {how} {where}"}
