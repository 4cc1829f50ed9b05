"""The "traceback from your code" verify prints: the user's frames, without the machinery around them.

Dropped everywhere: stabfix's own frames and the import system's (`importlib`, `<frozen ...>`), which
sit between every `import` and the module it ran. Dropped at the start: library frames (standard
library, site-packages) before the first frame of the user's code, e.g. `importlib.import_module`
or `runpy` calling into it. A traceback with no user frame at all keeps its library frames, so the
error is never shown without a location.
"""

from __future__ import annotations

import os
import site
import sysconfig
import traceback

import stabfix

_STABFIX = os.path.dirname(os.path.abspath(stabfix.__file__)) + os.sep
_IMPORTLIB = os.path.dirname(os.path.abspath(__import__("importlib").__file__)) + os.sep


def _library_roots() -> tuple[str, ...]:
    roots = {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    return tuple(sorted(os.path.abspath(r) + os.sep for r in roots if r))


_LIBRARY = _library_roots()


def is_machinery(filename: str) -> bool:
    """stabfix's frames and the import system's, never worth showing."""
    return (filename.startswith("<frozen ") or filename.startswith(_STABFIX)
            or os.path.abspath(filename).startswith(_IMPORTLIB))


def is_library(filename: str) -> bool:
    return filename.startswith("<") or os.path.abspath(filename).startswith(_LIBRARY)


def user_frames(frames: list[traceback.FrameSummary]) -> list[traceback.FrameSummary]:
    kept = [f for f in frames if not is_machinery(f.filename)]
    first_user = next((i for i, f in enumerate(kept) if not is_library(f.filename)), None)
    return kept[first_user:] if first_user is not None else kept


def user_traceback(exc: BaseException) -> str:
    """The traceback as Python prints it (causes and contexts included), from the user's first frame."""
    te = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    stack = [te]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        cur.stack = traceback.StackSummary.from_list(user_frames(list(cur.stack)))
        for nxt in (cur.__cause__, cur.__context__):
            if nxt is not None:
                stack.append(nxt)
    return "".join(te.format()).rstrip()
