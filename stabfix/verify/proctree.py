"""The processes a verify run started, all of them, and stopping them so that none is left behind.

torchrun starts each worker in a session of its own (so killing torchrun's process group misses
them), and a killed torchrun leaves its workers to init. So the whole tree is listed first, while
the parent links still exist, and then every process group in it and every process is killed.
Linux reads /proc; elsewhere `ps` gives the parent links.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time


def _parent_links() -> dict[int, int]:
    """pid -> parent pid of every process we can see."""
    links: dict[int, int] = {}
    if os.path.isdir("/proc"):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read().decode(errors="replace")
            except OSError:
                continue
            # the command name is in parentheses and may hold spaces: the fields follow the last ')'
            fields = stat[stat.rfind(")") + 2:].split()
            if len(fields) > 1:
                links[int(entry)] = int(fields[1])
        return links
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid="], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return links
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            links[int(parts[0])] = int(parts[1])
    return links


def descendants(root: int) -> list[int]:
    """Every process below `root` (children, their children, ...), parents before children."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parent_links().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    queue = [root]
    while queue:
        for child in sorted(children.get(queue.pop(0), [])):
            found.append(child)
            queue.append(child)
    return found


def environment_of(pid: int) -> dict[str, str]:
    """A process's environment (Linux, our own processes); empty when it cannot be read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(errors="replace"): value.decode(errors="replace") for key, value in pairs}


def alive(pids: list[int]) -> list[int]:
    """The ones still running (a zombie, dead but not yet reaped, counts as gone)."""
    running = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
            if stat[stat.rfind(")") + 2:].startswith("Z"):
                continue
        except OSError:
            pass
        running.append(pid)
    return running


def kill_tree(root: int, known: list[int] | None = None, marker: tuple[str, str] | None = None) -> list[int]:
    """SIGKILL `root`, everything below it and the process groups they lead, plus the `known` pids
    (found earlier, e.g. from their event files, in case they were already cut loose) whose
    environment holds `marker` (KEY, VALUE): a recycled pid is never someone else's process. Returns
    the pids found; none of them is running when this returns (unless it could not be killed)."""
    tree = [root, *descendants(root)]
    ours = [pid for pid in known or [] if marker and environment_of(pid).get(marker[0]) == marker[1]]
    targets = list(dict.fromkeys([*tree, *ours]))
    groups = set()
    for pid in targets:
        try:
            groups.add(os.getpgid(pid))
        except (ProcessLookupError, PermissionError):
            continue
    own_group = os.getpgrp()
    for group in sorted(groups - {own_group}):
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in targets:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 5
    while alive(targets) and time.monotonic() < deadline:
        time.sleep(0.05)
    return targets
