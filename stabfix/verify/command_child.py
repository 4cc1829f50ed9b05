"""Child side of `stabfix verify -- COMMAND`, the part that runs before torch (no torch import).

`install()` (called by the bootstrap sitecustomize in every process of the command):
- registers faulthandler on SIGUSR1, so that the parent's timeout shows where each process was stuck;
- records an uncaught exception as an `error` event (the user's traceback, stabfix frames removed),
  then lets Python print it as usual;
- waits for `import torch` (a meta-path finder that wraps torch's loader) and only then arms the
  step hooks (`step_hooks.arm`), so processes that never import torch are not touched;
- at exit, a process that stepped an optimizer fewer times than asked reports what it saw.
"""

from __future__ import annotations

import atexit
import faulthandler
import json
import os
import signal
import sys
import time
from typing import Any

from stabfix.verify.event_files import EVENTS_DIR_ENV, SETTINGS_ENV, EventWriter

STARTED_AT = time.perf_counter()
_state: dict[str, Any] = {"writer": None, "session": None, "settings": {}, "error_sent": False}


def settings() -> dict[str, Any]:
    return _state["settings"]


def writer() -> EventWriter:
    return _state["writer"]


def install() -> None:
    folder = os.environ.get(EVENTS_DIR_ENV)
    if not folder:
        return
    _state["writer"] = EventWriter(folder)
    try:
        _state["settings"] = json.loads(os.environ.get(SETTINGS_ENV) or "{}")
    except ValueError:
        _state["settings"] = {}
    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is not None:
        faulthandler.register(usr1, file=sys.stderr, all_threads=True)
    previous = sys.excepthook

    def excepthook(exc_type: Any, exc: BaseException, tb: Any) -> None:
        try:
            _report_exception(exc)
        finally:
            previous(exc_type, exc, tb)

    sys.excepthook = excepthook
    atexit.register(_at_exit)
    if "torch" in sys.modules:
        _arm()
    else:
        sys.meta_path.insert(0, _TorchWatcher())


class _TorchWatcher:
    """Arms the step hooks right after `import torch` has finished, in whatever module imported it."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = None
        for finder in sys.meta_path:  # the finders that would have found it (an editable install's too)
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec  # None: the other finders look for it as usual
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run_module(module)
            _arm()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _arm() -> None:
    try:
        from stabfix.verify import step_hooks

        _state["session"] = step_hooks.arm(writer(), settings(), STARTED_AT)
    except Exception as exc:  # noqa: BLE001 - the user's program runs on, and the parent hears why
        import traceback

        writer().send({"type": "internal", "message": f"{type(exc).__name__}: {exc}",
                       "traceback": "".join(traceback.format_exception(exc))})


def _report_exception(exc: BaseException) -> None:
    if isinstance(exc, KeyboardInterrupt) or _state["writer"] is None:
        return
    from stabfix.verify.child import _exc_message, _user_traceback

    session = _state["session"]
    step = session.current_step() if session is not None else None
    where = f"in step {step}" if step else "before the first optimizer step"
    writer().send({"type": "error", "phase": "step" if step else "command", "kind": "exception",
                   "message": f"the command raised {_exc_message(exc)} {where}",
                   "traceback": _user_traceback(exc), "step": step})
    _state["error_sent"] = True


def _at_exit() -> None:
    session = _state["session"]
    if session is not None and not _state["error_sent"]:
        try:
            session.ended_early()
        except Exception as exc:  # noqa: BLE001
            writer().send({"type": "internal", "message": f"{type(exc).__name__}: {exc}"})
