"""Child side of `stabfix verify -- COMMAND` once torch is imported: the command's optimizer steps are
verify's steps (imports torch; loaded by `command_child` right after `import torch`).

A step is one `optimizer.step()` of any optimizer, measured from the end of the previous one (the
global step post-hook) to its own end, so it holds the script's data loading, forward, backward and
update as they run. The first step is seen from its `optimizer.step()` on: nothing is instrumented
before it, and that is when the models are found (the roots of every `nn.Module` with parameters).
The loss is the tensor that the last `backward()` before the step was called on (a wrapper around
`torch.autograd.backward`, which `Tensor.backward` calls), when it has one element.

After `steps` steps the process reports `done` and ends itself (`os._exit(0)`: the script's code after
that point, its saving and its exit handlers, does not run). Events go through the `EventWriter` of
this process (`event_files`), in the same shapes as verify's child (`child.py`).
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

from stabfix.verify.child import (
    _model_state_bytes,
    _models_list,
    _param_counts,
    _seed_everything,
    _survivor_groups,
)
from stabfix.verify.event_files import EventWriter
from stabfix.verify.frame_locals import frame_locals
from stabfix.verify.instrument import (
    Instrumentation,
    _next_sequence_nr,
    count_step_tensors,
    exact_schedule,
)
from stabfix.verify.replica import ReplicaProbe, distributed_run
from stabfix.verify.startup_holders import largest_holders
from stabfix.verify.tracker import PHASES, untracked


def arm(writer: EventWriter, settings: dict[str, Any], started_at: float) -> "CommandSteps":
    """`started_at`: when the process started (perf_counter), for the time to the first step."""
    session = CommandSteps(writer, settings)
    session.started_at = started_at
    if settings.get("seed") is not None:
        _seed_everything(int(settings["seed"]))  # the script's own seeding, if any, comes later and wins
    session.install()
    return session


def find_models(objects: list[Any]) -> list[tuple[str, torch.nn.Module]]:
    """The root modules with parameters (no other such module contains them) among `objects` (the
    garbage collector's), in creation order."""
    module = torch.nn.Module
    # type(), not isinstance(): isinstance() reads __class__, which warns on deprecated objects
    modules = [o for o in objects if issubclass(type(o), module)]
    with_params = [m for m in modules if next(m.parameters(), None) is not None]
    inner: set[int] = set()
    for m in with_params:
        for sub in m.modules():
            if sub is not m:
                inner.add(id(sub))
    roots = [m for m in with_params if id(m) not in inner]
    if len(roots) < 2:
        return _models_list(roots) if roots else []
    names = _variable_names(roots)
    if len(set(names.values())) == len(roots):  # the script's own names: generator., discriminator.
        return [(names[id(m)] + ".", m) for m in roots]
    return _models_list(roots)


def _variable_names(roots: list[torch.nn.Module]) -> dict[int, str]:
    """The names the script gave the models: a variable of a running frame (the innermost first, up
    from the optimizer step) or of `__main__` that holds the module itself. Used for wording only."""
    wanted = {id(m) for m in roots}
    names: dict[int, str] = {}
    frame = sys._getframe(1)
    scopes = []
    while frame is not None:
        scopes.append(dict(frame_locals(frame)))
        frame = frame.f_back
    main = sys.modules.get("__main__")
    if main is not None:
        scopes.append(vars(main))
    for scope in scopes:
        for name, value in list(scope.items()):
            if id(value) in wanted and id(value) not in names and not name.startswith("_"):
                names[id(value)] = name
    return names


class CommandSteps:
    def __init__(self, writer: EventWriter, settings: dict[str, Any]) -> None:
        self.writer = writer
        self.steps = int(settings.get("steps", 10))
        self.warmup = int(settings.get("warmup", 2))
        self.project = Path(settings.get("project") or os.getcwd())
        self.exact = exact_schedule(self.steps, self.warmup, str(settings.get("exact_steps") or "auto"))
        if self.steps - 1 > self.warmup:
            # what a step keeps is usually stored after its optimizer.step() (`history.append(loss)`),
            # so in the next step's window: the one before the last is exact too, for the creation site
            self.exact.add(self.steps - 1)
        self.inst = Instrumentation([], torch.device("cpu"))
        self.models: list[tuple[str, torch.nn.Module]] = []
        self.done_steps = 0
        self.window: int | None = None  # the step being measured
        self.window_exact = False
        self.finished = False
        self.loss: Any = None
        self._depth = 0  # optimizer.step() calls in progress
        self.started_at = time.perf_counter()
        self._t0 = 0.0
        self._start_live = 0
        self._cuda_start = 0
        self._gc_was_enabled = True
        self._collected = [False]
        self._seq0 = 0
        self.replica = ReplicaProbe() if distributed_run() else None
        self._clip_norms: list[tuple[Any, float]] = []  # clip_grad_norm_ calls of the open step

    # -- hooks -------------------------------------------------------------------------------------
    def install(self) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        # order matters: ours opens step 1 before the probes read its gradients, and closes a step
        # after the probes have left the optimizer phase
        self._handles = [register_optimizer_step_pre_hook(self._pre_step)]
        self.inst.probes.install()
        self._handles.append(register_optimizer_step_post_hook(self._post_step))
        if self.replica is not None:
            self.replica.install()  # from the start: step 1's batch is read before its optimizer.step()
        original = self._original_backward = torch.autograd.backward

        @functools.wraps(original)
        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            self._note_loss(tensors)
            return original(tensors, *args, **kwargs)

        torch.autograd.backward = backward
        self._wrap_clipping()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child (a DataLoader worker) never reports, and must not run with the tracker on
        or automatic garbage collection paused, as its parent may be in the middle of a step."""
        if self.finished:
            return
        self.finished = True
        if self.replica is not None:
            self.replica.remove()
        if self.window is not None:
            self._stop_window()
            self.window = None

    def remove(self) -> None:
        """Undo `install` (the bench measures several runs in one process; a command never needs it)."""
        if self.window is not None:
            self._stop_window()
            self.window = None
        for handle in self._handles:
            handle.remove()
        self.inst.probes.remove()
        if self.replica is not None:
            self.replica.remove()
        torch.autograd.backward = self._original_backward
        from torch.nn.utils import clip_grad

        clip_norm, clip_with_norm = self._original_clipping
        clip_grad.clip_grad_norm_ = torch.nn.utils.clip_grad_norm_ = clip_norm
        torch.nn.utils.clip_grads_with_norm_ = clip_with_norm

    def _wrap_clipping(self) -> None:
        """Frameworks clip before `optimizer.step()` (HF Trainer's `max_grad_norm`, Lightning's
        `gradient_clip_val`, `accelerator.clip_grad_norm_`), so the gradients the step hooks read are
        the clipped ones. `clip_grad_norm_` returns the norm before clipping: keep it for the step
        (`grad_norm_before_clip`), so a run that clips every step still shows how large they were.
        Both public ways to clip are seen: `clip_grad_norm_` (Lightning, scripts) and
        `get_total_norm` + `clip_grads_with_norm_` (accelerate, hence HF Trainer), which is handed
        the norm. Frameworks look them up in `torch.nn.utils` at call time; scripts import them by
        name after `import torch`, when this runs."""
        from torch.nn.utils import clip_grad

        def keep(total: Any, max_norm: Any) -> None:
            # before step 1's window opens too: HF Trainer clips right before its first step()
            if not self.finished and isinstance(total, torch.Tensor):
                with untracked():
                    self._clip_norms.append((total.detach(), float(max_norm)))

        clip_norm = clip_grad.clip_grad_norm_
        clip_with_norm = torch.nn.utils.clip_grads_with_norm_
        self._original_clipping = (clip_norm, clip_with_norm)

        @functools.wraps(clip_norm)
        def clip_grad_norm_(parameters: Any, max_norm: float, *args: Any, **kwargs: Any) -> Any:
            total = clip_norm(parameters, max_norm, *args, **kwargs)
            keep(total, max_norm)
            return total

        @functools.wraps(clip_with_norm)
        def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Any, *args: Any, **kwargs: Any) -> Any:
            keep(total_norm, max_norm)
            return clip_with_norm(parameters, max_norm, total_norm, *args, **kwargs)

        clip_grad.clip_grad_norm_ = torch.nn.utils.clip_grad_norm_ = clip_grad_norm_
        torch.nn.utils.clip_grads_with_norm_ = clip_grads_with_norm_

    def _take_clipping(self) -> dict[str, Any]:
        """The step's largest norm before clipping and the clip it was held to (empty: no clipping)."""
        clips, self._clip_norms = self._clip_norms, []
        if not clips:
            return {}
        with untracked():
            norm, max_norm = max(((float(total), limit) for total, limit in clips), key=lambda c: (c[0] != c[0], c[0]))
        return {"grad_norm_before_clip": norm, "clip_max_norm": max_norm}

    def _note_loss(self, tensors: Any) -> None:
        if self.finished:
            return
        first = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
        if isinstance(first, torch.Tensor) and first.numel() == 1:
            with untracked():
                self.loss = first.detach()

    def _pre_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._depth += 1
        if self.finished or self.window is not None:
            return
        self._first_step(optimizer)

    def _post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth:  # an optimizer stepping another one (ZeroRedundancyOptimizer): one step
            return
        if self.finished or self.window is None:
            return
        record = self._close()
        if self.replica is not None:  # one rank of several: what the cross-rank checks compare
            with untracked():
                record["sync"] = self.replica.after_step(optimizer)
        self.writer.send(record)
        if self.done_steps >= self.steps:
            self._finish(stopped=True)
            self._exit()
        self._open(self.done_steps + 1)

    def current_step(self) -> int | None:
        return self.window

    # -- steps -------------------------------------------------------------------------------------
    def _first_step(self, optimizer: Any) -> None:
        inst = self.inst
        device = next((p.device for g in optimizer.param_groups for p in g["params"]), torch.device("cpu"))
        inst.device, inst.use_cuda = device, device.type == "cuda"
        gc.collect()
        objects = gc.get_objects()
        self.models = find_models(objects)
        inst.probes.hook_modules(self.models)
        tensor = torch.Tensor
        existing = [o for o in objects if issubclass(type(o), tensor)]
        del objects
        self.writer.send({
            "type": "start",
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "device": str(device),
            "device_name": torch.cuda.get_device_name(device) if inst.use_cuda else "cpu",
            "threads": torch.get_num_threads(),
            "argv": list(sys.argv),
        })
        inst.tracker.register_existing(existing)
        del existing
        if inst.use_cuda:
            stats = torch.cuda.memory_stats(device)
            inst._retries0, inst._ooms0 = stats.get("num_alloc_retries", 0), stats.get("num_ooms", 0)
        self.writer.send({
            "type": "ready",
            "setup_s": time.perf_counter() - self.started_at,
            "ready_label": "first optimizer step",
            "live_before_bytes": inst.tracker.live,
            "model_state_bytes": _model_state_bytes(self.models),
            "live_before_holders": largest_holders(inst.tracker, self.models, inst.tracker.live),
            "models": [{"name": (p.rstrip(".") or type(m).__name__), "type": type(m).__name__} for p, m in self.models],
            "optimizers": [type(optimizer).__name__],
            "modules_hooked": inst.probes._module_hook_count,
        })
        self._open(1)

    def _open(self, index: int) -> None:
        """Start measuring step `index` (exact: the dispatch tracker on; sampled: automatic garbage
        collection paused, so that what the step keeps is found in the youngest generation)."""
        inst = self.inst
        self.window = index
        self.window_exact = index in self.exact
        defer = index > 1 and not self.window_exact and not inst.use_cuda
        self._start_live, self._cuda_start = inst._begin(index, defer_checks=defer)
        if self.window_exact:
            inst.tracker.__enter__()
        else:
            self._collected[0] = False
            gc.callbacks.append(self._on_gc)
            self._gc_was_enabled = gc.isenabled()
            gc.disable()
            self._seq0 = _next_sequence_nr()
        self._t0 = time.perf_counter()

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        self._collected[0] = True

    def _stop_window(self) -> None:
        tracker = self.inst.tracker
        if self.window_exact:
            tracker.__exit__(None, None, None)
        else:
            gc.callbacks.remove(self._on_gc)
            if self._gc_was_enabled:
                gc.enable()

    def _close(self) -> dict[str, Any]:
        inst, index = self.inst, self.window
        assert index is not None
        loss, self.loss = self.loss, None
        clipping = self._take_clipping()
        if self.window_exact:
            inst.tracker.__exit__(None, None, None)
            readback = inst.probes.end_step(index, loss)
            t1 = time.perf_counter()
        else:
            try:
                readback = inst.probes.end_step(index, loss)
                t1 = time.perf_counter()
                del loss
                loss = None
                count_step_tensors(inst.tracker, gc.get_objects(0) if not self._collected[0] else gc.get_objects(),
                                   self._seq0)
            finally:
                gc.callbacks.remove(self._on_gc)
                if self._gc_was_enabled:
                    gc.enable()
        del loss
        inst.tracker.step = -1
        tracker = inst.tracker
        record: dict[str, Any] = {
            "type": "step",
            "step": index,
            "warmup": index <= self.warmup,
            "time_ms": (t1 - self._t0) * 1e3,
            "start_live_bytes": self._start_live,
            "peak_bytes": tracker.step_peak if self.window_exact else None,
            "phase_peak_bytes": {PHASES[k]: ((v or None) if self.window_exact else None)
                                 for k, v in enumerate(tracker.phase_peaks)},
            "live_end_bytes": tracker.live,
            "exact": self.window_exact,
        }
        if index == 1:
            record["partial"] = True  # seen from its optimizer.step() on
        record.update(readback)
        record.update(clipping)
        inst._cuda_stats(record, self._cuda_start)
        self.window = None
        self.done_steps = index
        inst.probes.note_grads_outside_optimizers([])
        return record

    # -- the end -----------------------------------------------------------------------------------
    def ended_early(self) -> None:
        """At exit: the command ended before `steps` steps; report the completed ones."""
        if self.finished or self.done_steps == 0 and self.window is None:
            return
        if self.window is not None:
            self._stop_window()
            self.window = None
        self._finish(stopped=False)

    def _finish(self, stopped: bool) -> None:
        self.finished = True
        probes, tracker = self.inst.probes, self.inst.tracker
        probes.remove()
        if self.replica is not None:
            self.replica.remove()
        self.loss = None
        gc.collect()
        last = self.done_steps
        first = self.warmup + 1 if self.warmup + 1 < last else 1
        survivors = _survivor_groups(tracker.survivors(first, last), last, self.project) if last else []
        optimizers = list(probes.optimizers_seen.values())
        self.writer.send({
            "type": "done",
            "params": _param_counts(self.models, optimizers, probes.optimized_params, probes.grad_outside_optimizers),
            "optimizers_stepped": probes.optimizers_stepped,
            "first_nonfinite_module": probes.first_nonfinite,
            "benign_nonfinite_modules": list(probes.benign.values())[:10],
            "survivors": survivors,
            "survivor_window": [first, last - 1],
            "live_after_gc_bytes": tracker.live,
            "snapshot": None,
            "stopped_by_stabfix": stopped,
            "steps_seen": last,
        })

    def _exit(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(0)
