"""How a run stops: on SIGINT/SIGTERM between two files' writes, never inside one, and with no worker process
outliving the run (workers only analyse; the parent alone writes, so it knows exactly what was written)."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator, NoReturn

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PARENT_POLL_SECONDS = 0.5


class Stopped(BaseException):
    """A stop signal arrived. A BaseException so that no `except Exception` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class SignalGuard:
    """While entered (in the main thread), SIGINT and SIGTERM raise Stopped, except inside `held()`: a signal
    that arrives there is raised when the held block has finished."""

    def __init__(self) -> None:
        self._holding = False
        self._pending: int | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "SignalGuard":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame) -> None:
        if self._pending is None:
            self._pending = signum
        if not self._holding:
            self._holding = True  # a second Ctrl-C while the first one unwinds is noted, not raised again
            raise Stopped(signum)

    @contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self._pending is not None:
            raise Stopped(self._pending)

    def hold_from_now(self) -> None:
        """Stopping: further signals are noted, not raised, until the guard is left."""
        self._holding = True


def start_worker(parent_pid: int) -> None:
    """Initializer of every worker process: it ignores Ctrl-C (the parent decides what stops, and stops it)
    and dies with the parent however the parent ends, kill -9 included."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's SignalGuard, inherited through fork
    if not _kill_me_with_parent():
        threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:  # the parent was gone before the line above took effect
        os._exit(1)


def _kill_me_with_parent() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _exit_when_orphaned(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


def abandon_workers(executor: ProcessPoolExecutor) -> None:
    """Hand out no more work and wait for none: the workers write nothing, so what they are busy with can be
    dropped. (Terminating them here could cut a result in half in the executor's pipe and hang its shutdown.)"""
    executor.shutdown(wait=False, cancel_futures=True)


def exit_now(code: int) -> NoReturn:
    """End the process at once, without the interpreter's teardown: after a run that was stopped, without
    waiting for abandoned workers to finish their files (they are killed, and would die with this process
    anyway); after a run that has reported, without freeing what it kept one object at a time."""
    for child in multiprocessing.active_children():
        child.kill()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader has gone (`stabfix scan | head`), or the stream was closed
            pass
    os._exit(code)
