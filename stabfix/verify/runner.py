"""Parent side: start the child process, stream its JSON-line events, enforce the timeout.

The child gets a dedicated pipe for events (its stdout/stderr go to a temporary file, so prints in
the user's code can never corrupt the protocol). On timeout the child is asked (SIGUSR1, handled
by faulthandler) to dump its Python stack, then its process group is killed; the dump shows where
the user's step was stuck.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import stabfix
from stabfix.verify.settings import Settings

_CHILD_DIR = str(Path(__file__).resolve().parent) + os.sep
_STABFIX_PARENT = str(Path(stabfix.__file__).resolve().parent.parent)
# Imports stabfix from the same place as the parent, then takes that folder off sys.path again so
# that the user's imports resolve exactly as in their own project.
_BOOTSTRAP = (
    "import sys\n"
    "p = sys.argv.pop(1)\n"
    "sys.path.insert(1, p)\n"
    "import stabfix.verify.child as c\n"
    "sys.path.remove(p)\n"
    "raise SystemExit(c.main(sys.argv[1:]))\n"
)
OUTPUT_TAIL_LINES = 40
GRACE_AFTER_DONE_S = 10.0


@dataclass
class RunResult:
    start: dict[str, Any] | None = None
    ready: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    done: dict[str, Any] | None = None
    error: dict[str, Any] | None = None  # kind, phase, message, traceback, step
    output_tail: str = ""
    wall_s: float = 0.0


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _tail(text: str, lines: int = OUTPUT_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _hang_stack(output: str) -> tuple[str, str]:
    """(the user's stack where the child was stuck, output with the dump removed)."""
    marker = "(most recent call first):"
    if marker not in output:
        return "", output
    first = min(
        (i for i in (output.find("Current thread 0x"), output.find("Thread 0x")) if i >= 0), default=-1
    )
    before = output[:first] if first >= 0 else output
    dump = output[first:] if first >= 0 else ""
    blocks = [b for b in dump.split("\n\n") if marker in b]
    chosen = None
    for block in blocks:
        if _CHILD_DIR in block:  # the main thread: it is inside the child's step loop
            chosen = block
            break
    if chosen is None and blocks:
        chosen = blocks[0]
    frames = []
    for line in (chosen or "").splitlines()[1:]:
        line = line.strip()
        if line.startswith("File ") and _CHILD_DIR not in line and not line.startswith('File "<string>"'):
            frames.append("  " + line)
    frames.reverse()  # show it like a traceback: most recent call last
    stack = "Stack of the running step (most recent call last):\n" + "\n".join(frames) if frames else ""
    return stack, before


def run_child(
    settings: Settings,
    project: Path,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    snapshot: str | None = None,
    child_module: str = "stabfix.verify.child",
    extra: dict[str, Any] | None = None,
) -> RunResult:
    """`child_module` / `extra`: another child entry point (its `main(argv)`) and payload keys for it."""
    result = RunResult()
    payload = settings.to_dict()
    read_fd, write_fd = os.pipe()
    payload.update(project=str(project), fd=write_fd, snapshot=snapshot)
    payload.update(extra or {})
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
    bootstrap = _BOOTSTRAP.replace("stabfix.verify.child", child_module)
    cmd = [sys.executable, "-c", bootstrap, _STABFIX_PARENT, json.dumps(payload)]
    started = time.monotonic()
    deadline = started + settings.timeout
    out_file = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=str(project),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        out_file.close()
        result.error = {"kind": "crash", "phase": "start", "message": f"could not start Python: {exc}"}
        return result
    os.close(write_fd)
    timed_out = False
    buffer = b""
    finished_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if finished_at is not None and now - finished_at > GRACE_AFTER_DONE_S:
                break
            ready, _, _ = select.select([read_fd], [], [], min(0.25, deadline - now))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                _take(result, event)
                if on_event is not None:
                    on_event(event)
                if event.get("type") in ("done", "error", "internal"):
                    finished_at = time.monotonic()
        if timed_out:
            _stop(proc, dump_stack=True)
        else:
            try:
                proc.wait(timeout=max(1.0, min(GRACE_AFTER_DONE_S, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                _stop(proc, dump_stack=False)
    except BaseException:
        _stop(proc, dump_stack=False)
        raise
    finally:
        os.close(read_fd)
        out_file.seek(0)
        output = out_file.read().decode("utf-8", errors="replace")
        out_file.close()
    result.wall_s = time.monotonic() - started

    if timed_out:
        stack, output = _hang_stack(output)
        where = _where(result)
        result.error = {
            "kind": "timeout",
            "phase": where[0],
            "step": where[1],
            "message": f"timed out after {settings.timeout:g}s (verify.timeout) {where[2]}",
            "traceback": stack or None,
        }
    elif result.error is None and result.done is None:
        where = _where(result)
        code = proc.returncode
        how = f"was killed by {_signal_name(code)}" if code is not None and code < 0 else f"exited with code {code}"
        result.error = {
            "kind": "crash",
            "phase": where[0],
            "step": where[1],
            "message": f"the process running your code {how} {where[2]}",
            "traceback": None,
        }
    result.output_tail = _tail(output)
    return result


def _where(result: RunResult) -> tuple[str, int | None, str]:
    if result.ready is None:
        return "entry", None, "while importing or calling the entry"
    step = len(result.steps) + 1
    return "step", step, f"during step {step}"


def _take(result: RunResult, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "start":
        result.start = event
    elif kind == "ready":
        result.ready = event
    elif kind == "step":
        result.steps.append(event)
    elif kind == "done":
        result.done = event
    elif kind == "error":
        result.error = event
    elif kind == "internal":
        result.error = {
            "kind": "internal",
            "phase": "stabfix",
            "message": f"stabfix internal error in the verify child: {event.get('message')}",
            "internal_traceback": event.get("traceback"),
            "traceback": None,
        }


def _stop(proc: subprocess.Popen[bytes], dump_stack: bool) -> None:
    """Stop the child we started (and its process group) after an optional stack dump."""
    if proc.poll() is not None:
        return
    usr1 = getattr(signal, "SIGUSR1", None)
    if dump_stack and usr1 is not None:
        try:
            os.kill(proc.pid, usr1)
            time.sleep(0.5)
        except ProcessLookupError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
