"""The fallback of `verify --estimate` when fake tensors cannot run the user's code (child only).

Real CPU steps (a cold and a steady one, counted by verify's live-tensor tracker) at growing batch
sizes 1, 2, 4 (below the entry's own `batch_size` default), then each phase's peak is extrapolated
linearly in the batch size to the entry's size; labelled `estimate(extrapolated)`. Without a
`batch_size` keyword the steps run once at the entry's own size (measured, nothing to extrapolate).
"""

from __future__ import annotations

import gc
from typing import Any, Callable

from stabfix.verify.child import UserCodeError, _exc_message, _models_list, _optimizers_list, _seed_everything, _unpack, _user_traceback


def _measure(entry: Callable[..., Any], seed: int, kwargs: dict[str, Any]) -> dict[str, Any]:
    import torch

    from stabfix.verify.estimate_steps import _labels, _make_tracker, _optimizer_hooks
    from stabfix.verify.instrument import all_tensors
    from stabfix.verify.tracker import PHASES

    _seed_everything(seed)
    try:
        models_raw, opts_raw, step = _unpack(entry(torch.device("cpu"), **kwargs))
    except UserCodeError:
        raise
    except BaseException as exc:  # noqa: BLE001
        raise UserCodeError("entry", f"the entry raised {_exc_message(exc)}", _user_traceback(exc)) from None
    models, optimizers = _models_list(models_raw), _optimizers_list(opts_raw)
    tracker = _make_tracker()
    gc.collect()
    from torch._subclasses.fake_tensor import FakeTensor

    # a fake tensor of the failed fake attempt that the user's code still holds has no memory
    tracker.register_existing([t for t in all_tensors() if not isinstance(t, FakeTensor)])
    hooks = _optimizer_hooks(tracker)
    peaks: list[dict[str, int]] = []
    try:
        for i in (1, 2):
            tracker.begin_step(i)
            try:
                with tracker:
                    step()
            except BaseException as exc:  # noqa: BLE001
                raise UserCodeError("step", f"real CPU step {i} raised {_exc_message(exc)}", _user_traceback(exc),
                                    step=i) from None
            tracker.step = -1
            peaks.append({PHASES[k]: v for k, v in enumerate(tracker.phase_peaks)})
    finally:
        for h in hooks:
            h.remove()
    labels = _labels(models, optimizers)
    state = {"parameters": 0, "gradients": 0, "optimizer_state": 0}
    for ref in list(tracker.refs.values()):
        cat = labels.get(ref.key, ("activations", ""))[0]
        if cat in state:
            state[cat] += ref.nbytes
    phase = {k: max(p[k] for p in peaks) for k in peaks[0]}
    # which step held each phase's peak: the first (cold: optimizer state being created) or the second
    phase_step = {k: "cold" if peaks[0][k] >= peaks[1][k] else "steady" for k in peaks[0]}
    del models, optimizers, step, models_raw, opts_raw, tracker
    gc.collect()
    return {"phases": phase, "state": state, "phase_step": phase_step}


def extrapolate(entry: Callable[..., Any], entry_name: str, seed: int, batch_size: int | None,
                channel: Any) -> dict[str, Any]:
    sizes = [b for b in (1, 2, 4) if batch_size and b < batch_size] if batch_size else []
    if len(sizes) < 2:
        m = _measure(entry, seed, {})
        points = [(batch_size or 0, m)]
        target = m["phases"]
        how = "real CPU steps at the entry's own size (no batch_size keyword to grow: nothing extrapolated)"
    else:
        points = [(b, _measure(entry, seed, {"batch_size": b})) for b in sizes]
        (b1, m1), (b2, m2) = points[-2], points[-1]
        target = {}
        for k in m2["phases"]:
            slope = (m2["phases"][k] - m1["phases"][k]) / (b2 - b1)
            target[k] = int(round(m2["phases"][k] + slope * (batch_size - b2)))  # type: ignore[operator]
        how = (f"real CPU steps at batch sizes {', '.join(str(b) for b in sizes)}, each phase's peak extrapolated "
               f"linearly to batch_size={batch_size}")
    phase = max(target, key=lambda k: target[k])
    peak = target[phase]
    state = points[-1][1]["state"]
    acts = max(0, peak - sum(state.values()))
    return {
        "tensor_peak_bytes": peak, "peak_phase": phase, "peak_step": points[-1][1]["phase_step"][phase],
        "phase_peak_bytes": target,
        "breakdown": dict(state, activations=acts), "largest": [], "fallback": how,
        "points": [{"batch_size": b, "phase_peak_bytes": m["phases"]} for b, m in points],
    }
