"""Pausing Python's cyclic garbage collector while one file is analysed.

An analysis allocates millions of objects that all live until it is done: libcst's tree (which has no
cycles) and the model's facts. Every automatic collection during it walks those young objects, alive, to
free almost nothing (the 50,000-line benchmark file: two collections during the parse and two during the
analysis, 1.2 s of CPU, freeing under 17,000 objects); the collection after the file (scan_runner) walks
them once and frees the model's cycles. Pausing spans one analysis at most, so the garbage held back is
bounded by one file's (a fix loop that analyses a file again collects between its analyses).

The pause is re-entrant and counted across threads (a language server analyses on a worker thread): the
collector runs again when the last pause ends, and only if it ran before the first began.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_pauses = 0
_resume = False  # whether the collector was enabled when the first pause began


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collection inside the block (an explicit `gc.collect()` still runs)."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
