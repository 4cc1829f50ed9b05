"""Builds the user's full-size models for `stabfix verify --estimate` without allocating (parameters
on `meta`, then fake CPU tensors in one FakeTensorMode) and runs counted steps under the fake mode,
counting live bytes per phase with verify's own dispatch-level tracker. Child process only (imports
torch); shared by the child's main (`estimate_child`), its variants (`estimate_variants`) and its
real-CPU fallback (`estimate_fallback`), which is why it imports none of them.

Nothing here allocates parameter, gradient, optimizer or activation memory: a FakeTensor carries
shape, dtype, device and a storage size, never data.
"""

from __future__ import annotations

import gc
import os
import traceback
import types
import warnings
from typing import Any, Callable

from stabfix.verify.child import (
    UserCodeError,
    _exc_message,
    _models_list,
    _optimizers_list,
    _seed_everything,
    _unpack,
    _user_traceback,
)

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
LARGEST = 8
KB = 1024
MIB = 1024 * 1024
# The non-tensor memory a CUDA process holds besides PyTorch's tensors (stated in every report).
CONTEXT_BYTES = 512 * MIB      # CUDA context + kernel images of torch's CUDA libraries
WORKSPACE_BYTES = 64 * MIB     # cuBLAS / cuBLASLt / cuDNN workspaces
ALLOCATOR_OVERHEAD = 0.08      # caching-allocator rounding (512 B / 2 MiB blocks) and fragmentation


class FakeModeFailed(Exception):
    """The user's code could not run under fake tensors: `op` and `where` say what and where."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        self.stage = stage
        self.original = exc
        self.op = _failing_op(exc)
        self.where = _user_frame(exc)
        what = f"{self.op}" if self.op else _exc_message(exc)
        at = f" at {self.where}" if self.where else ""
        super().__init__(f"fake tensors cannot run {what}{at} ({stage}): {_exc_message(exc)}")


def _failing_op(exc: BaseException) -> str | None:
    func = getattr(exc, "func", None)
    if func is not None:
        return str(func)
    text = str(exc)
    for marker in ("aten.", "aten::"):
        i = text.find(marker)
        if i >= 0:
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "._:"):
                j += 1
            return text[i:j].rstrip(".")
    return None


def _user_frame(exc: BaseException) -> str | None:
    from stabfix.verify.tracker import is_internal_file

    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        if not is_internal_file(frame.filename) and not frame.filename.startswith(_HERE):
            return f"{frame.filename}:{frame.lineno}"
    return None


# --------------------------------------------------------------------------------------------
# building on meta, converting to fake
# --------------------------------------------------------------------------------------------
def _keep_meta_mode() -> Any:
    """A TorchFunctionMode under which moving a meta tensor to a device keeps it on meta (dtype
    conversions still apply), so `model.to(device)` in the user's entry allocates nothing."""
    import torch
    from torch.overrides import TorchFunctionMode

    moves = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu}

    class KeepMeta(TorchFunctionMode):
        def __torch_function__(self, func: Any, kinds: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func in moves and args and isinstance(args[0], torch.Tensor) and args[0].is_meta:
                t = args[0]
                dtype = kwargs.get("dtype")
                for a in args[1:]:
                    if isinstance(a, torch.dtype):
                        dtype = a
                    elif isinstance(a, torch.Tensor):
                        dtype = a.dtype
                if dtype is None or dtype == t.dtype:
                    return t
                return func(t, dtype=dtype)
            return func(*args, **kwargs)

    return KeepMeta()


def _metas() -> list[Any]:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.is_meta]


def to_fake(mode: Any) -> int:
    """Replace every meta tensor alive by a fake CPU tensor of the same shape, dtype and strides,
    in every list, dict, closure cell and object attribute that refers to it (one heap pass).
    Tied weights are one object, so they stay tied. Returns how many references were left (tuples)."""
    import torch

    gc.collect()
    metas = _metas()
    if not metas:
        return 0
    memo: dict[int, Any] = {}
    for t in metas:
        with mode:
            f = torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cpu")
        if isinstance(t, torch.nn.Parameter):
            f = torch.nn.Parameter(f, requires_grad=t.requires_grad)
        elif t.requires_grad and t.is_leaf:
            f.requires_grad_(True)
        memo[id(t)] = f
    left = 0
    referrers = gc.get_referrers(*metas)
    skip = {id(metas), id(memo), id(referrers)}
    for r in referrers:
        if id(r) in skip:
            continue
        if isinstance(r, list):
            for i, v in enumerate(r):
                if isinstance(v, torch.Tensor) and id(v) in memo:
                    r[i] = memo[id(v)]
        elif isinstance(r, dict):
            _patch_dict(r, memo, torch)
        elif isinstance(r, types.CellType):
            r.cell_contents = memo[id(r.cell_contents)]
        elif hasattr(r, "__dict__") and not isinstance(r, (type, types.ModuleType, types.FrameType)):
            _patch_dict(vars(r), memo, torch)
        elif not isinstance(r, (types.FrameType,)):
            left += 1
    return left


def _patch_dict(d: dict[Any, Any], memo: dict[int, Any], torch: Any) -> None:
    for k, v in list(d.items()):
        if isinstance(v, torch.Tensor) and id(v) in memo:
            d[k] = memo[id(v)]
        if isinstance(k, torch.Tensor) and id(k) in memo:  # optimizer.state is keyed by parameter
            d[memo[id(k)]] = d.pop(k)


# --------------------------------------------------------------------------------------------
# CUDA kernels on fake CPU tensors
# --------------------------------------------------------------------------------------------
def _flash_attention_mode() -> Any:
    """TorchFunctionMode routing `F.scaled_dot_product_attention` to a flash-style kernel (saves q, k,
    v, the output and a float32 logsumexp; no L x L matrix, no dropout mask) as CUDA's flash /
    memory-efficient kernels do; CPU's math path materialises the attention matrix. Calls made from
    inside torch's own Python functions (nn.MultiheadAttention) are not seen by a mode: entering it
    also swaps the `torch.nn.functional` attribute for the duration."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    original = F.scaled_dot_product_attention

    def sdpa(q: Any, k: Any, v: Any, *rest: Any, **kwargs: Any) -> Any:
        mask = kwargs.pop("attn_mask", rest[0] if len(rest) > 0 else None)
        dropout = kwargs.pop("dropout_p", rest[1] if len(rest) > 1 else 0.0)
        causal = kwargs.pop("is_causal", rest[2] if len(rest) > 2 else False)
        scale = kwargs.pop("scale", rest[3] if len(rest) > 3 else None)
        gqa = kwargs.pop("enable_gqa", rest[4] if len(rest) > 4 else False)
        if q.dim() != 4 or q.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return original(q, k, v, mask, dropout, causal, scale=scale, enable_gqa=gqa)
        if gqa and k.shape[-3] != q.shape[-3]:
            rep = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float("-inf"))
        Flash.calls += 1
        return flash(q, k, v, 0.0, bool(causal) and mask is None, attn_mask=mask, scale=scale)[0]

    class Flash(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func: Any, kinds: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func is original:
                return sdpa(*args, **(kwargs or {}))
            return func(*args, **(kwargs or {}))

        def __enter__(self) -> Any:
            F.scaled_dot_product_attention = sdpa
            return super().__enter__()

        def __exit__(self, *exc: Any) -> Any:
            F.scaled_dot_product_attention = original
            return super().__exit__(*exc)

    return Flash()


def _cuda_optimizers(optimizers: list[Any]) -> list[str]:
    """Switch optimizers to the implementation CUDA would run: foreach unless fused was asked for."""
    changed = []
    for opt in optimizers:
        for group in opt.param_groups:
            if "foreach" in group and group.get("foreach") is None and not group.get("fused"):
                group["foreach"] = True
                changed.append(type(opt).__name__)
    return sorted(set(changed))


# --------------------------------------------------------------------------------------------
# tracking
# --------------------------------------------------------------------------------------------
def _make_tracker() -> Any:
    import torch

    from stabfix.verify.tracker import LiveTensorTracker

    class EstimateTracker(LiveTensorTracker):
        """verify's tracker plus: the module that made each storage, and one snapshot of the live
        storages when live bytes first reach `snap_at` (the peak of an identical earlier step)."""

        def __init__(self) -> None:
            super().__init__()
            self.module_stack: list[str] = []
            self.made: dict[int, tuple[tuple[int, ...], str, str]] = {}
            self.snap_at: int | None = None
            self.snapshot: list[tuple[int, int, Any]] | None = None
            self.on_snapshot: Callable[[], Any] | None = None
            self.snapshot_labels: Any = None
            self.scalar_reads = 0
            self.scalar_site: Any = None
            self._local_scalar = torch.ops.aten._local_scalar_dense.default

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func is self._local_scalar:
                # `.item()` / `bool(t)` / `.tolist()`: a fake tensor has no value. Read it as the
                # healthy case (False for flags such as isnan(x).any(), 1 for counts and numbers).
                if not self.in_optimizer:  # optimizers read their step counters; not the user's code
                    self.scalar_reads += 1
                if self.scalar_site is None and not self.in_optimizer:
                    self.scalar_site = self._site(2)
                dtype = args[0].dtype
                if dtype is torch.bool:
                    return False
                return 1.0 if (dtype.is_floating_point or dtype.is_complex) else 1
            return super().__torch_dispatch__(func, types, args, kwargs)

        def _see(self, t: Any, func: Any, kind: int) -> None:
            before = len(self.refs)
            super()._see(t, func, kind)
            if len(self.refs) != before:
                try:
                    key = id(t.untyped_storage())
                except (RuntimeError, NotImplementedError):
                    return
                if self.in_optimizer:
                    where = "optimizer.step()"
                elif self._graph_task_id() >= 0:
                    where = "backward"
                else:
                    where = self.module_stack[-1] if self.module_stack else "(step code)"
                    ref = self.refs.get(key)
                    site = ref.info[3] if ref is not None else None
                    if not self.module_stack and site:
                        where = f"{os.path.basename(site[0])}:{site[1]} ({site[2]})"
                shape = tuple(t.shape)
                size = t.element_size()
                nbytes = self.refs[key].nbytes if key in self.refs else 0
                if nbytes and t.numel() * size != nbytes:  # a view of a larger new storage: show the storage
                    shape, where = (nbytes // size,), f"{where} (storage under a view)"
                self.made[key] = (shape, str(t.dtype).replace("torch.", ""), where)
                if self.snap_at is not None and self.snapshot is None and self.live >= self.snap_at:
                    # copy what made each storage now: ids of storages freed later get reused
                    self.snapshot = [(r.key, r.nbytes, self.made.get(r.key)) for r in self.refs.values()]
                    if self.on_snapshot is not None:
                        self.snapshot_labels = self.on_snapshot()

    return EstimateTracker()


def _module_hooks(tracker: Any, models: list[tuple[str, Any]]) -> list[Any]:
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    names: dict[int, str] = {}
    for prefix, model in models:
        for name, module in model.named_modules():
            names.setdefault(id(module), (prefix + name) if name else (prefix.rstrip(".") or type(model).__name__))

    def pre(module: Any, args: Any) -> None:
        tracker.module_stack.append(names.get(id(module), type(module).__name__))

    def post(module: Any, args: Any, out: Any) -> None:
        if tracker.module_stack:
            tracker.module_stack.pop()

    return [register_module_forward_pre_hook(pre), register_module_forward_hook(post)]


def _optimizer_hooks(tracker: Any) -> list[Any]:
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    return [
        register_optimizer_step_pre_hook(lambda *a: tracker.enter_optimizer()),
        register_optimizer_step_post_hook(lambda *a: tracker.exit_optimizer()),
    ]


def _labels(models: list[tuple[str, Any]], optimizers: list[Any]) -> dict[int, tuple[str, str]]:
    """storage id -> (category, label) for parameters/buffers, gradients and optimizer state now."""
    import torch

    out: dict[int, tuple[str, str]] = {}

    def sid(t: Any) -> int | None:
        try:
            return id(t.untyped_storage())
        except (RuntimeError, NotImplementedError, AttributeError):
            return None

    pnames: dict[int, str] = {}
    for prefix, model in models:
        for name, p in model.named_parameters(remove_duplicate=True):
            pnames.setdefault(id(p), prefix + name)
            s = sid(p)
            if s is not None:
                out.setdefault(s, ("parameters", f"parameter {prefix + name}"))
            if p.grad is not None and sid(p.grad) is not None:
                out.setdefault(sid(p.grad), ("gradients", f"gradient of {prefix + name}"))  # type: ignore[arg-type]
        for name, b in model.named_buffers(remove_duplicate=True):
            s = sid(b)
            if s is not None:
                out.setdefault(s, ("parameters", f"buffer {prefix + name}"))
    for opt in optimizers:
        for p, state in list(opt.state.items()):
            for key, value in state.items():
                if isinstance(value, torch.Tensor):
                    s = sid(value)
                    if s is not None:
                        out.setdefault(s, ("optimizer_state", f"{type(opt).__name__} {key} of {pnames.get(id(p), 'a parameter')}"))
    return out


# --------------------------------------------------------------------------------------------
# one estimate
# --------------------------------------------------------------------------------------------
class Built:
    def __init__(self, models: list[tuple[str, Any]], optimizers: list[Any], step: Callable[[], Any],
                 existing: int, unpatched: int) -> None:
        self.models, self.optimizers, self.step = models, optimizers, step
        self.existing, self.unpatched = existing, unpatched


def build(entry: Callable[..., Any], entry_name: str, seed: int, mode: Any, kwargs: dict[str, Any]) -> Built:
    import torch

    _seed_everything(seed)
    try:
        with torch.device("meta"), _keep_meta_mode():
            result = entry(torch.device("cpu"), **kwargs)
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        if isinstance(exc, ImportError):  # a missing package is not a fake-tensor problem: no fallback
            raise UserCodeError("entry", f"{entry_name}(cpu) raised {_exc_message(exc)}", _user_traceback(exc)) from None
        raise FakeModeFailed("building the models on the meta device", exc) from None
    models_raw, optimizers_raw, step_fn = _unpack(result)
    del result
    models = _models_list(models_raw)
    optimizers = _optimizers_list(optimizers_raw)
    unpatched = to_fake(mode)
    return Built(models, optimizers, step_fn, 0, unpatched)


def run_steps(built: Built, mode: Any, kernels: str, transform: Callable[[Callable[[], Any]], Callable[[], Any]] | None = None,
              snapshot: bool = True) -> dict[str, Any]:
    """Cold step, steady step, and (for the snapshot) a replay of the steady step, under the fake mode."""
    from stabfix.verify.instrument import all_tensors
    from stabfix.verify.tracker import PHASES

    tracker = _make_tracker()
    gc.collect()
    existing = all_tensors()
    tracker.register_existing(existing)
    for t in existing:
        try:
            tracker.made.setdefault(id(t.untyped_storage()), (tuple(t.shape), str(t.dtype).replace("torch.", ""),
                                                               "(exists before the step: data, constants)"))
        except (RuntimeError, NotImplementedError):
            pass
    del existing
    start_live = tracker.live
    hooks = _module_hooks(tracker, built.models) + _optimizer_hooks(tracker)
    extra = [_flash_attention_mode()] if kernels == "cuda" else []
    step = transform(built.step) if transform else built.step
    records = []
    try:
        for i in (1, 2, 3) if snapshot else (1, 2):
            if i == 3:
                tracker.snap_at = max(r["peak_bytes"] for r in records[1:])
                tracker.on_snapshot = lambda: _labels(built.models, built.optimizers)
            begin = tracker.begin_step(i)
            try:
                with mode:
                    for m in extra:
                        m.__enter__()
                    try:
                        with tracker:
                            loss = step()
                    finally:
                        for m in reversed(extra):
                            m.__exit__(None, None, None)
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                raise FakeModeFailed(f"step {i}", exc) from None
            del loss
            tracker.step = -1
            records.append({
                "step": i, "start_live_bytes": begin, "peak_bytes": tracker.step_peak,
                "phase_peak_bytes": {PHASES[k]: v for k, v in enumerate(tracker.phase_peaks)},
                "live_end_bytes": tracker.live,
            })
    finally:
        for h in hooks:
            h.remove()
    cold, steady = records[0], records[1]
    worst = max(cold, steady, key=lambda r: r["peak_bytes"])
    phase = max(worst["phase_peak_bytes"], key=lambda k: worst["phase_peak_bytes"][k])
    out: dict[str, Any] = {
        "tensor_peak_bytes": worst["peak_bytes"], "peak_phase": phase, "peak_step": "cold" if worst is cold else "steady",
        "cold_step": cold, "steady_step": steady, "live_before_bytes": start_live,
    }
    if snapshot and tracker.snapshot is not None:
        labels = tracker.snapshot_labels or {}
        breakdown = {"parameters": 0, "gradients": 0, "optimizer_state": 0, "activations": 0}
        rows = []
        for key, nbytes, made in tracker.snapshot:
            cat, label = labels.get(key, ("activations", None))
            breakdown[cat] += nbytes
            shape, dtype, where = made or ((), "?", "(before the step)")
            rows.append({"bytes": nbytes, "shape": list(shape), "dtype": dtype, "module": label or where})
        rows.sort(key=lambda r: -r["bytes"])
        # the snapshot is the steady step's peak; when the cold step peaked higher, keep the cold total
        # with the steady split of model state (activations take the rest)
        state = breakdown["parameters"] + breakdown["gradients"] + breakdown["optimizer_state"]
        breakdown["activations"] = max(0, worst["peak_bytes"] - state)
        out["breakdown"] = breakdown
        out["largest"] = rows[:LARGEST]
    out["sdpa_calls"] = sum(getattr(m, "calls", 0) for m in extra) // max(1, len(records))
    out["scalar_reads"] = tracker.scalar_reads // max(1, len(records))
    if tracker.scalar_site:
        out["scalar_site"] = f"{tracker.scalar_site[0]}:{tracker.scalar_site[1]}"
    return out


def margin_for(tensor_peak: int, fixed: int | None = None) -> int:
    """Non-tensor memory on the card: the CUDA context and library workspaces (or `fixed`, the
    user's verify.estimate.margin_gb), plus the caching allocator's rounding and fragmentation."""
    base = CONTEXT_BYTES + WORKSPACE_BYTES if fixed is None else fixed
    return base + int(tensor_peak * ALLOCATOR_OVERHEAD)
