"""One instrumented training step (child process and bench only; imports torch).

`Instrumentation.run_step` wraps the user's zero-argument step: it resets the per-step counters,
runs the step, reads everything back with one host transfer, and returns the step's record.

Two kinds of step (`exact_schedule` picks which runs where):
- exact: the live-tensor tracker (a TorchDispatchMode, one Python call per aten op) is active, so
  the step's peak, per-phase peaks and the creation site of every storage are measured.
- sampled: no dispatch mode. The probes still run (loss, gradient norms, module output checks, CUDA
  allocator stats), and at the step boundary the storages of the tensors created during the step are
  counted: automatic garbage collection is paused for the step, so every Python object the step
  created and kept is still in the youngest generation, and one pass over it finds them; the tensors
  that an autograd graph kept alive by one of them saved for backward are counted too (a walk over the
  graph nodes created during the step). Live bytes at the boundaries are therefore known; the step's
  peak and its phases are not (None). Storages kept only by C++ with no Python tensor and no graph
  leading to them are not seen on these steps. On the CPU the module output checks of a sampled step
  can be deferred (`defer_checks`, verify's steps after the first): they then run only when the loss
  or a gradient is non-finite (see `probes`), which leaves a healthy sampled step with the gradient
  norms, the read-back and the boundary count as its only extra work.
"""

from __future__ import annotations

import gc
import time
import warnings
from typing import Any, Callable

import torch

from stabfix.verify.probes import Probes
from stabfix.verify.tracker import PHASES, LiveTensorTracker


class StepFailed(Exception):
    """The user's step raised; `original` is the user's exception."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


class BadLoss(Exception):
    """The step returned something that is not a loss."""


def all_tensors() -> list[Any]:
    with warnings.catch_warnings():  # isinstance() on deprecated torch objects warns
        warnings.simplefilter("ignore")
        return [o for o in gc.get_objects() if isinstance(o, torch.Tensor)]


EXACT_EVERY = 10  # one exact step in ten: an exact CPU step costs up to ~1.4x a bare one


def exact_schedule(steps: int, warmup: int, exact: str = "auto") -> set[int]:
    """The steps that run under exact per-op accounting; the others are sampled.

    auto: the last step, and every EXACT_EVERY-th step before it down to the end of warm-up (10 steps:
    step 10; 50 steps: 10, 20, ..., 50). Growth and the survivors' count and holders need no exact step
    (the sampled steps' boundary counts give them); the exact steps give what only per-op accounting
    measures: the peak and its phases (the last step is the steady state, and the highest when memory
    grows) and the op and source line that created each surviving storage (a storage of a sampled step
    takes the site of the exact step's storages of the same size and holder). `all`: every step.
    """
    if steps <= 0:
        return set()
    if exact == "all":
        return set(range(1, steps + 1))
    chosen = {s for s in range(steps, warmup, -EXACT_EVERY)}
    return chosen or {steps}


_SAVED_NAMES: dict[type, tuple[str, ...]] = {}
MAX_GRAPH_NODES = 20_000


def _next_sequence_nr() -> int:
    """The sequence number the next autograd node created on this thread will get (0 when it cannot
    be read: then every node the graphs reach is looked at, up to MAX_GRAPH_NODES)."""
    peek = getattr(torch._C._autograd, "_get_sequence_nr", None)  # a plain read where torch has it
    if peek is not None:
        try:
            return int(peek())
        except Exception:  # noqa: BLE001 - fall back to creating a node
            pass
    try:
        with torch.enable_grad():
            probe = torch.empty(0, requires_grad=True)
            return int((probe * 1).grad_fn._sequence_nr()) + 1
    except Exception:  # noqa: BLE001 - a torch without the binding
        return 0


def _saved_by_new_nodes(roots: list[Any], seq0: int) -> list[torch.Tensor]:
    """The tensors saved for backward by the autograd nodes created since `seq0` that these graphs
    reach (older nodes were looked at when they were new; released ones raise and are skipped)."""
    out: list[torch.Tensor] = []
    seen: set[int] = set()
    keep: list[Any] = []  # keep the node wrappers alive: a freed one's id may be reused
    stack = list(roots)
    while stack and len(keep) < MAX_GRAPH_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        try:
            seq = int(node._sequence_nr())
        except Exception:  # noqa: BLE001 - a node type without a sequence number
            seq = seq0
        if seq < seq0 or seq == 2**64 - 1:  # an older node, or AccumulateGrad (the leaf itself)
            continue
        names = _SAVED_NAMES.get(type(node))
        if names is None:
            names = _SAVED_NAMES[type(node)] = tuple(n for n in dir(node) if n.startswith("_saved_"))
        for name in names:
            try:
                value = getattr(node, name)
            except Exception:  # noqa: BLE001 - released after backward
                continue
            for t in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(t, torch.Tensor):
                    out.append(t)
        stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()) if nxt is not None)
    return out


def count_step_tensors(tracker: LiveTensorTracker, young: list[Any], seq0: int) -> None:
    """At the end of a sampled step: count the tensors among `young` (the objects the step created and
    kept) and the tensors their new autograd nodes saved for backward."""
    # type(), not isinstance(): isinstance() reads __class__, which warns on some deprecated
    # torch objects and lies on proxies
    tensor = torch.Tensor
    fresh = [o for o in young if issubclass(type(o), tensor)]
    del young
    tracker.register_existing(fresh, origin="sampled")
    graphs = [t.grad_fn for t in fresh if t.grad_fn is not None]
    del fresh
    if graphs:
        tracker.register_existing(_saved_by_new_nodes(graphs, seq0), origin="sampled")


class Instrumentation:
    def __init__(self, models: list[tuple[str, torch.nn.Module]], device: torch.device) -> None:
        self.device = device
        self.use_cuda = device.type == "cuda"
        self.tracker = LiveTensorTracker()
        self.probes = Probes(models, self.tracker)
        self._retries0 = self._ooms0 = 0
        self._existing_done = False

    def install(self) -> None:
        """Install the hooks and count the tensors that already exist (first call only)."""
        self.probes.install()
        if not self._existing_done:
            self._existing_done = True
            gc.collect()
            existing = all_tensors()
            self.tracker.register_existing(existing)
            del existing
            if self.use_cuda:
                stats = torch.cuda.memory_stats(self.device)
                self._retries0 = stats.get("num_alloc_retries", 0)
                self._ooms0 = stats.get("num_ooms", 0)

    def remove(self) -> None:
        self.probes.remove()

    def run_step(self, index: int, step_fn: Callable[[], Any], warmup: bool, exact: bool = True,
                 defer_checks: bool = False) -> dict[str, Any]:
        """One step, exact or sampled. `defer_checks` asks for deferred module output checks; they are
        used on the CPU's sampled steps only: an exact step would count the kept outputs in its peak,
        and on CUDA in the allocator's peak (there the checks run asynchronously anyway)."""
        if not exact:
            return self._run_sampled(index, step_fn, warmup, defer_checks and not self.use_cuda)
        tracker, probes = self.tracker, self.probes
        start_live, cuda_start = self._begin(index, defer_checks=False)
        t0 = time.perf_counter()
        with tracker:
            loss = self._call(step_fn)
        readback = probes.end_step(index, loss)  # the one host transfer (syncs CUDA)
        t1 = time.perf_counter()
        del loss
        tracker.step = -1  # our own bookkeeping between steps is not the user's
        record: dict[str, Any] = {
            "type": "step",
            "step": index,
            "warmup": warmup,
            "time_ms": (t1 - t0) * 1e3,
            "start_live_bytes": start_live,
            "peak_bytes": tracker.step_peak,
            "phase_peak_bytes": {PHASES[k]: (v or None) for k, v in enumerate(tracker.phase_peaks)},
            "live_end_bytes": tracker.live,
            "exact": True,
        }
        record.update(readback)
        self._cuda_stats(record, cuda_start)
        return record

    def _run_sampled(self, index: int, step_fn: Callable[[], Any], warmup: bool, defer_checks: bool) -> dict[str, Any]:
        """The step without the dispatch mode; live bytes counted at the step boundary (see the
        module docstring)."""
        tracker, probes = self.tracker, self.probes
        start_live, cuda_start = self._begin(index, defer_checks)
        gc_was_enabled = gc.isenabled()
        collected = [False]

        def on_gc(phase: str, info: dict[str, Any]) -> None:  # the user's own gc.collect()
            collected[0] = True

        gc.callbacks.append(on_gc)
        gc.disable()
        seq0 = _next_sequence_nr()
        t0 = time.perf_counter()
        try:
            loss = self._call(step_fn)
            readback = probes.end_step(index, loss)  # the one host transfer (syncs CUDA)
            t1 = time.perf_counter()
            del loss
            # everything the step created and kept is in the youngest generation, unless a collection
            # ran during the step (then look at all of them)
            count_step_tensors(tracker, gc.get_objects(0) if not collected[0] else gc.get_objects(), seq0)
        finally:
            gc.callbacks.remove(on_gc)
            if gc_was_enabled:
                gc.enable()
        tracker.step = -1
        record: dict[str, Any] = {
            "type": "step",
            "step": index,
            "warmup": warmup,
            "time_ms": (t1 - t0) * 1e3,
            "start_live_bytes": start_live,
            "peak_bytes": None,
            "phase_peak_bytes": {p: None for p in PHASES},
            "live_end_bytes": tracker.live,
            "exact": False,
        }
        record.update(readback)
        self._cuda_stats(record, cuda_start)
        return record

    def _begin(self, index: int, defer_checks: bool) -> tuple[int, int]:
        """Start a step: the probes and tracker reset; the live bytes (and CUDA's allocated bytes) it starts from."""
        self.probes.begin_step(defer_checks)
        start_live = self.tracker.begin_step(index)
        cuda_start = 0
        if self.use_cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            cuda_start = torch.cuda.memory_allocated(self.device)
        return start_live, cuda_start

    def _call(self, step_fn: Callable[[], Any]) -> Any:
        """The user's step, its failure or a return value that is no loss turned into verify's errors."""
        try:
            loss = step_fn()
        except BaseException as exc:  # noqa: BLE001 - everything the user's step does
            self.tracker.step = -1
            self.probes.drop_held()
            raise StepFailed(exc) from None
        if isinstance(loss, bool) or not (loss is None or isinstance(loss, (torch.Tensor, int, float))):
            self.tracker.step = -1
            self.probes.drop_held()
            raise BadLoss(f"step must return the loss (a tensor or a float), got {type(loss).__name__}")
        return loss

    def _cuda_stats(self, record: dict[str, Any], cuda_start: int) -> None:
        if self.use_cuda:
            stats = torch.cuda.memory_stats(self.device)
            record["cuda"] = {
                "start_allocated_bytes": cuda_start,
                "max_allocated_bytes": torch.cuda.max_memory_allocated(self.device),
                "max_reserved_bytes": torch.cuda.max_memory_reserved(self.device),
                "allocated_end_bytes": torch.cuda.memory_allocated(self.device),
                "alloc_retries": stats.get("num_alloc_retries", 0) - self._retries0,
                "ooms": stats.get("num_ooms", 0) - self._ooms0,
            }
