"""The per-process event files of `stabfix verify -- COMMAND` (no torch; both sides import this).

Every Python process the command starts loads the bootstrap (`bootstrap/sitecustomize.py`). A process
that has something to say (it stepped an optimizer, or it died of an uncaught exception) appends JSON
lines to its own file in the folder named by EVENTS_DIR_ENV: `events-rank{RANK}-pid{pid}.jsonl`. One
file per process means no locking between processes, and grandchildren (torchrun workers, `accelerate
launch`) report the same way. The parent reads the files as they grow (`EventFolder.poll`).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The contract between the parent and every process of the command (docs/verify.md, "zero-glue").
EVENTS_DIR_ENV = "STABFIX_VERIFY_EVENTS"      # folder of the event files; its presence arms the bootstrap
SETTINGS_ENV = "STABFIX_VERIFY_SETTINGS"      # JSON: steps, warmup, seed, exact_steps, project, ...
STABFIX_PATH_ENV = "STABFIX_VERIFY_STABFIX"   # the folder stabfix is imported from (taken off sys.path again)
RANK_ENV = "RANK"                             # the process's rank (torchrun sets it); 0 when unset
FILE_PATTERN = re.compile(r"^events-rank(\d+)-pid(\d+)\.jsonl$")


def process_rank() -> int:
    try:
        return int(os.environ.get(RANK_ENV, "0"))
    except ValueError:
        return 0


def file_name(rank: int, pid: int) -> str:
    return f"events-rank{rank}-pid{pid}.jsonl"


class EventWriter:
    """Appends one JSON object per line to this process's file; the file is created at the first event
    (a process that never speaks leaves no file). Each line is one `os.write` on an O_APPEND file, so a
    reader never sees half an event followed by another one."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._fd: int | None = None
        self._pid = -1

    def send(self, event: dict[str, Any]) -> None:
        pid = os.getpid()
        if self._fd is None or self._pid != pid:  # a forked child writes its own file
            rank = process_rank()
            path = os.path.join(self.folder, file_name(rank, pid))
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._pid = pid
        event = {**event, "rank": process_rank(), "pid": pid, "time": time.time()}
        data = (json.dumps(event, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]


@dataclass
class _Tail:
    path: Path
    rank: int
    pid: int
    offset: int = 0
    partial: bytes = b""
    events: list[dict[str, Any]] = field(default_factory=list)


class EventFolder:
    """The parent's view of the folder: `poll()` returns the new complete events of every file, as
    (rank, pid, event), files in a stable order (rank, then pid)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: dict[str, _Tail] = {}

    def poll(self) -> list[tuple[int, int, dict[str, Any]]]:
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return []
        for name in names:
            found = FILE_PATTERN.match(name)
            if found and name not in self.files:
                self.files[name] = _Tail(self.folder / name, int(found.group(1)), int(found.group(2)))
        out: list[tuple[int, int, dict[str, Any]]] = []
        for tail in sorted(self.files.values(), key=lambda t: (t.rank, t.pid)):
            try:
                with open(tail.path, "rb") as handle:
                    handle.seek(tail.offset)
                    chunk = handle.read()
            except OSError:
                continue
            tail.offset += len(chunk)
            data = tail.partial + chunk
            *lines, tail.partial = data.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                tail.events.append(event)
                out.append((tail.rank, tail.pid, event))
        return out
