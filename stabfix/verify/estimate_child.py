"""The child process of `stabfix verify --estimate`: builds the user's full-size models under fake
tensors and runs a cold, a steady and a replay step (`estimate_steps`), then the variants that would
make it fit (`estimate_variants`) or, when fake tensors cannot run the code, a real-CPU extrapolation
(`estimate_fallback`). Streams the same JSON-line events as `stabfix.verify.child` (start, ready,
done with the estimate, error, internal) so that `runner.run_child` drives it.
"""

from __future__ import annotations

import gc
import inspect
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from stabfix.verify import estimate_variants as variants
from stabfix.verify.child import (
    UserCodeError,
    _Channel,
    _check_entry_module,
    _load_entry,
    _seed_everything,
    _user_traceback,
    serve,
    unique_parameters,
)
from stabfix.verify.estimate_fallback import extrapolate
from stabfix.verify.estimate_steps import KB, FakeModeFailed, _cuda_optimizers, build, margin_for, run_steps


# --------------------------------------------------------------------------------------------
# the child's main
# --------------------------------------------------------------------------------------------
def run(settings: dict[str, Any], channel: _Channel) -> int:
    t_start = time.perf_counter()
    project = Path(settings["project"])
    est = settings["estimate"]
    entry_name = est.get("entry") or settings["entry"]
    seed = int(settings["seed"])
    kernels = est.get("kernels", "cuda")
    _check_entry_module(entry_name, project)

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    channel.send({"type": "start", "pid": os.getpid(), "torch": torch.__version__,
                  "python": sys.version.split()[0], "device": "fake cpu", "device_name": "fake tensors",
                  "threads": torch.get_num_threads()})
    _seed_everything(seed)
    entry = _load_entry(entry_name, project)
    batch_kw = _batch_size_default(entry)
    result: dict[str, Any] = {"entry": entry_name, "kernels": kernels, "batch_size": batch_kw}
    fake_error: str | None = None
    mode = built = None
    try:
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        built = build(entry, entry_name, seed, mode, {})
        result["optimizers_switched"] = _cuda_optimizers(built.optimizers) if kernels == "cuda" else []
        result["fused_requested"] = any(g.get("fused") for o in built.optimizers for g in o.param_groups)
        result["unpatched_references"] = built.unpatched
        result["params"] = _param_info(built.models, built.optimizers)
        channel.send({"type": "ready", "setup_s": time.perf_counter() - t_start, "models": [
            {"name": (p.rstrip(".") or type(m).__name__), "type": type(m).__name__} for p, m in built.models],
            "optimizers": [type(o).__name__ for o in built.optimizers]})
        base = run_steps(built, mode, kernels)
        result.update(base)
        result["label"] = "estimate(fake)"
        base_s = time.perf_counter() - t_start
        result["base_s"] = base_s
        built = None  # the fake models go before the variants run (and `del mode, built` below still finds a name)
        memory = est.get("device_memory_bytes")
        total = base["tensor_peak_bytes"] + margin_for(base["tensor_peak_bytes"], est.get("margin_bytes"))
        policy = est.get("variants", "auto")
        if policy == "always" or (policy == "auto" and memory and total > memory):
            channel.send({"type": "variants"})
            result["variants"] = variants.run_variants(entry, entry_name, seed, kernels, result, batch_kw)
    except FakeModeFailed as exc:
        fake_error = str(exc)
        result["fake_error"] = {"message": fake_error, "op": exc.op, "where": exc.where,
                                "traceback": _user_traceback(exc.original)}
        _forget(exc)
    if fake_error is not None:
        # nothing of the fake attempt may be alive (and counted as live memory) in the real steps
        del mode, built
        gc.collect()
        need = 4 * int((result.get("params") or {}).get("bytes", 0))  # parameters, gradients, Adam's two states
        free = _available_ram()
        if free is not None and need > free // 2:
            raise UserCodeError(
                "estimate", f"{fake_error}; the real-CPU fallback is not tried: the model state alone would take "
                f"about {need / 2**30:.1f} GiB of this machine's {free / 2**30:.1f} GiB available RAM", kind="estimate")

        try:
            result.update(extrapolate(entry, entry_name, seed, batch_kw, channel))
            result["label"] = "estimate(extrapolated)"
        except UserCodeError as fallback:
            raise UserCodeError(
                "estimate", f"{fake_error}; the real-CPU fallback failed too: {fallback.message}",
                fallback.tb, kind="estimate") from None
    result["total_s"] = time.perf_counter() - t_start
    try:
        import resource

        result["child_max_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * KB
    except Exception:  # noqa: BLE001
        pass
    channel.send({"type": "done", "estimate": result})
    return 0


def _forget(exc: FakeModeFailed) -> None:
    """Cut the failed fake attempt's traceback: its frames hold the fake models, optimizers and the
    step's fake tensors, which would otherwise stay alive through the real-CPU fallback."""
    original = exc.original
    exc.original = None  # type: ignore[assignment]
    seen: set[int] = set()
    while original is not None and id(original) not in seen:
        seen.add(id(original))
        original.__traceback__ = None
        original = original.__cause__ or original.__context__
    exc.__traceback__ = None


def _available_ram() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * KB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _batch_size_default(entry: Callable[..., Any]) -> int | None:
    """The entry's `batch_size` keyword default (the contract for the half-micro-batch variant and
    the fallback's growing batches), or None when it has none."""
    try:
        param = inspect.signature(entry).parameters.get("batch_size")
    except (TypeError, ValueError):
        return None
    if param is None or not isinstance(param.default, int) or isinstance(param.default, bool):
        return None
    return param.default


def _param_info(models: list[tuple[str, Any]], optimizers: list[Any]) -> dict[str, Any]:
    seen = unique_parameters(models)
    total = sum(p.numel() for p in seen.values())
    trainable = sum(p.numel() for p in seen.values() if p.requires_grad)
    nbytes = sum(p.numel() * p.element_size() for p in seen.values())
    return {"total": total, "trainable": trainable, "bytes": nbytes,
            "trainable_bytes": sum(p.numel() * p.element_size() for p in seen.values() if p.requires_grad)}


def main(argv: list[str]) -> int:
    return serve(argv, run)
