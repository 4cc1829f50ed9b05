"""One instrumented training step (child process and bench only; imports torch).

`Instrumentation.run_step` wraps the user's zero-argument step: it resets the per-step counters,
runs the step with the live-tensor tracker active (and the gradient/numerics probes installed),
reads everything back with one host transfer, and returns the step's record.
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

    def run_step(self, index: int, step_fn: Callable[[], Any], warmup: bool) -> dict[str, Any]:
        tracker, probes = self.tracker, self.probes
        probes.begin_step()
        start_live = tracker.begin_step(index)
        cuda_start = 0
        if self.use_cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            cuda_start = torch.cuda.memory_allocated(self.device)
        t0 = time.perf_counter()
        try:
            with tracker:
                loss = step_fn()
        except BaseException as exc:  # noqa: BLE001 - everything the user's step does
            tracker.step = -1
            raise StepFailed(exc) from None
        if isinstance(loss, bool) or not (loss is None or isinstance(loss, (torch.Tensor, int, float))):
            tracker.step = -1
            raise BadLoss(f"step must return the loss (a tensor or a float), got {type(loss).__name__}")
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
        }
        record.update(readback)
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
        return record
