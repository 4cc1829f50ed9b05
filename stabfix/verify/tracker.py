"""Exact live-tensor accounting with a TorchDispatchMode (child process only; imports torch).

Every aten op that runs while the mode is active is intercepted; each tensor it returns is mapped
to its storage (`untyped_storage()`; the storage's Python object is preserved by torch for as long
as the C++ storage lives, so its identity is a stable key), and a weak reference with a callback
on that storage object tells us when the memory is released. Counting storages, not tensors, means
views and in-place results are never double counted.

Cost per op is one Python call plus, for ops that can allocate, one storage lookup; the stack walk
that records where a storage was created runs only for new storages.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

FORWARD, BACKWARD, OPTIMIZER = 0, 1, 2
PHASES = ("forward", "backward", "optimizer")

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_STABFIX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIRS = tuple(
    {os.path.join(p, "") for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p}
)
# The ops that hand back (an alias of) an input but may be the first time we see a storage.
_ALIAS_BUT_NEW = {"lift_fresh", "lift", "set_", "resize_", "resize_as_", "_resize_output_"}

# Excluding the Python dispatch keys makes ops run past every dispatch mode: used by stabfix's own
# probes (norms, finiteness checks) so that they neither cost a mode round trip nor get counted.
_PY_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(
    torch._C.DispatchKey.PythonTLSSnapshot
)


def untracked() -> Any:
    """Context manager: ops inside bypass the tracker (and any other dispatch mode)."""
    return torch._C._ExcludeDispatchKeyGuard(_PY_KEYS)


def is_internal_file(filename: str) -> bool:
    return (
        filename.startswith(_TORCH_DIR)
        or filename.startswith(_STABFIX_DIR)
        or filename.startswith(_STDLIB_DIRS)
        or filename.startswith("<")
    )


# Installed packages (transformers, lightning, accelerate, ...) are where a framework's loop runs, not
# what the user can change: a storage created there is attributed to the user's frame that called in
# (the `super().compute_loss(...)` line, the `trainer.fit(...)` line), when the stack has one.
_LIBRARY_SEGMENTS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def is_library_file(filename: str) -> bool:
    return any(segment in filename for segment in _LIBRARY_SEGMENTS)


def frame_kind(filename: str) -> int:
    """0: the user's code; 1: an installed package's (a virtual environment's site-packages lies
    inside its stdlib folder: it is a package's all the same); 2: torch, stabfix or the stdlib."""
    if filename.startswith((_TORCH_DIR, _STABFIX_DIR)) or filename.startswith("<"):
        return 2
    if is_library_file(filename):
        return 1
    return 2 if is_internal_file(filename) else 0


class _StorageRef(weakref.ref):
    """Weak reference to a storage; `info` is (step, phase, op, site) of its creation."""

    __slots__ = ("key", "nbytes", "info")


class LiveTensorTracker(TorchDispatchMode):
    """Live bytes, per-step and per-phase peaks, and the origin of every storage created."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps __torch_dispatch__ in a dynamo-disable shim by default (two extra Python calls
        # per op); ours is plain eager Python that dynamo never needs to trace.
        return False

    def __init__(self) -> None:
        super().__init__()
        self.refs: dict[int, _StorageRef] = {}
        self.live = 0
        self.step = 0  # 0 = tensors that existed before the first step
        self.step_peak = 0
        self.phase_peaks = [0, 0, 0]
        self.in_optimizer = 0
        self._kinds: dict[Any, tuple[int, Any]] = {}
        self._internal_code: dict[Any, bool] = {}
        self._graph_task_id = torch._C._current_graph_task_id
        self._on_free_cb = self._on_free
        # Inside backward and optimizer.step() the Python stack is the same for every allocation
        # (the `loss.backward()` / `opt.step()` line): walk it once per graph task / step call.
        self._site_task = -2
        self._site_task_value: Any = None
        self._optimizer_site: Any = None
        self._optimizer_frame: Any = None  # the frame that called optimizer.step(), until its site is needed

    # -- bookkeeping -------------------------------------------------------------------------
    def _on_free(self, ref: _StorageRef) -> None:
        if self.refs.pop(ref.key, None) is not None:
            self.live -= ref.nbytes

    def _classify(self, func: Any) -> tuple[int, Any]:
        """0: returns aliases only (views, in-place), nothing new; 1: may return new storages;
        2: may also resize a storage it was given (check sizes of known storages)."""
        schema = func._schema
        name = schema.name.split("::")[-1]
        if name in _ALIAS_BUT_NEW or any(a.is_out for a in schema.arguments):
            kind = 2
        elif all(r.alias_info is not None for r in schema.returns):  # views, in-place, no returns
            kind = 0
        else:
            kind = 1
        entry = (kind, getattr(func, "_op", func))  # call the C++ op directly, skipping OpOverload.__call__
        self._kinds[func] = entry
        return entry

    def _site(self, depth: int = 3) -> tuple[str, int, str] | None:
        return self._site_of(sys._getframe(depth))

    def _site_of(self, frame: Any) -> tuple[str, int, str] | None:
        """The innermost frame from here up that is the user's own code (not torch, stabfix, the
        stdlib or an installed package); without one, the innermost installed package's frame."""
        cache = self._internal_code
        library_site = None
        while frame is not None:
            code = frame.f_code
            kind = cache.get(code)
            if kind is None:
                kind = cache[code] = frame_kind(code.co_filename)
            if kind == 0:
                return (code.co_filename, frame.f_lineno, code.co_name)
            if kind == 1 and library_site is None:
                library_site = (code.co_filename, frame.f_lineno, code.co_name)
            frame = frame.f_back
        return library_site

    def _see(self, t: torch.Tensor, func: Any, kind: int) -> None:
        """The hot path: one call per tensor an allocating op returns."""
        try:
            st = t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse, nested and other storage-less layouts
            return
        key = id(st)
        ref = self.refs.get(key)
        if ref is not None:
            if kind == 2:
                nbytes = st.nbytes()
                if nbytes != ref.nbytes:  # resized in place (out= or resize_)
                    self.live += nbytes - ref.nbytes
                    ref.nbytes = nbytes
                    self._bump(self._phase())
            return
        nbytes = st.nbytes()
        if not nbytes or t.is_meta:
            return
        if self.in_optimizer:
            phase = OPTIMIZER
            if self._optimizer_frame is not None:  # the first allocation of this optimizer step
                self._optimizer_site = self._site_of(self._optimizer_frame)
                self._optimizer_frame = None
            site = self._optimizer_site
        else:
            task = self._graph_task_id()
            if task >= 0:
                phase = BACKWARD
                if task != self._site_task:
                    self._site_task = task
                    self._site_task_value = self._site()
                site = self._site_task_value
            else:
                phase = FORWARD
                site = self._site()
        ref = _StorageRef(st, self._on_free_cb)
        ref.key = key
        ref.nbytes = nbytes
        ref.info = (self.step, phase, func, site)
        self.refs[key] = ref
        live = self.live + nbytes
        self.live = live
        if live > self.step_peak:
            self.step_peak = live
        peaks = self.phase_peaks
        if live > peaks[phase]:
            peaks[phase] = live

    def _phase(self) -> int:
        if self.in_optimizer:
            return OPTIMIZER
        return BACKWARD if self._graph_task_id() >= 0 else FORWARD

    def _bump(self, phase: int) -> None:
        live = self.live
        if live > self.step_peak:
            self.step_peak = live
        if live > self.phase_peaks[phase]:
            self.phase_peaks[phase] = live

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        entry = self._kinds.get(func)
        if entry is None:
            entry = self._classify(func)
        kind, call = entry
        out = call(*args, **kwargs) if kwargs else call(*args)
        if kind:
            if isinstance(out, torch.Tensor):
                self._see(out, func, kind)
            elif isinstance(out, (tuple, list)):
                for item in out:
                    if isinstance(item, torch.Tensor):
                        self._see(item, func, kind)
        return out

    # -- API used by the child -----------------------------------------------------------------
    def register_existing(self, tensors: Any, origin: str = "existing") -> int:
        """Count tensors whose storages the tracker has not seen: before the first step (parameters,
        buffers, data, ...; origin "existing"), or found at the end of a sampled step (origin
        "sampled": created during that step, op and site unknown). Returns the bytes added."""
        phase = FORWARD if origin == "existing" else None
        added = 0
        for t in tensors:
            try:
                st = t.untyped_storage()
            except (RuntimeError, NotImplementedError, TypeError):
                continue
            key = id(st)
            if key in self.refs:
                continue
            nbytes = st.nbytes()
            if nbytes == 0 or t.is_meta:
                continue
            ref = _StorageRef(st, self._on_free_cb)
            ref.key = key
            ref.nbytes = nbytes
            ref.info = (self.step, phase, origin, None)
            self.refs[key] = ref
            self.live += nbytes
            added += nbytes
        return added

    def begin_step(self, step: int) -> int:
        self.step = step
        self.step_peak = self.live
        self.phase_peaks = [0, 0, 0]
        return self.live

    def enter_optimizer(self) -> None:
        if not self.in_optimizer:
            # the site is walked for at the first allocation (sampled steps and steps that allocate
            # nothing there never pay for it); the frame is alive anyway while optimizer.step() runs
            self._optimizer_frame = sys._getframe(2)
            self._optimizer_site = None
        self.in_optimizer += 1
        if self.live > self.phase_peaks[OPTIMIZER]:
            self.phase_peaks[OPTIMIZER] = self.live

    def exit_optimizer(self) -> None:
        self.in_optimizer = max(0, self.in_optimizer - 1)
        if not self.in_optimizer:
            self._optimizer_frame = None  # never keep a frame (and its locals) past the step

    def survivors(self, first_step: int, last_step: int) -> list[_StorageRef]:
        """Storages created in steps first_step..last_step (inclusive) that are still alive."""
        return [r for r in list(self.refs.values()) if first_step <= r.info[0] <= last_step and r() is not None]


def op_name(op: Any) -> str:
    if isinstance(op, str):
        return op
    name = getattr(op, "__name__", None) or str(op)
    # OpOverload names print as "mm.default"; show "aten.mm"
    namespace = getattr(op, "namespace", "aten")
    base = name.split(".")[0]
    return f"{namespace}.{base}"
