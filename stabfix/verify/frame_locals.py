"""Reading a running function's local variables without keeping them alive.

Before Python 3.13, `frame.f_locals` of a function copies its variables into a dict that the frame
keeps until the function returns (or the next read). Read from an optimizer hook, that dict held the
training loop's batch and loss of that moment for the rest of the run, and verify counted them as
the user's live memory."""

from __future__ import annotations

import inspect
import sys
from types import FrameType
from typing import Any

_SNAPSHOTS = sys.version_info < (3, 13)  # from 3.13 f_locals is a live view, not a copy


def frame_locals(frame: FrameType) -> list[tuple[str, Any]]:
    """(name, value) of each local variable of `frame`, with no reference left behind on the frame."""
    scope = frame.f_locals
    items = list(scope.items())
    # Only a function's frame has a copy: a module's or class body's f_locals is its namespace.
    # A copy someone else holds (the function kept `locals()`) is theirs: it stays as it is.
    if _SNAPSHOTS and frame.f_code.co_flags & inspect.CO_OPTIMIZED and sys.getrefcount(scope) <= 3:
        scope.clear()
    return items
