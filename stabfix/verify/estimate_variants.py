""""What would make it fit" for `verify --estimate` (child process only; imports torch).

Each variant rebuilds the user's models on meta/fake tensors, applies one change the user's code can
take, and re-runs the cold and steady fake steps: its peak is measured like the base estimate's. The
ZeRO/FSDP rows are computed from the base estimate's breakdown (model state divided by N), not run.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

ZERO_GPUS = (2, 4, 8)


def _autocast(step: Callable[[], Any]) -> Callable[[], Any]:
    import torch

    def wrapped() -> Any:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return step()

    return wrapped


def repeated_blocks(models: list[tuple[str, Any]]) -> list[Any]:
    """The blocks of the largest ModuleList/Sequential whose children share one class (>= 2)."""
    import torch

    best: list[Any] = []
    for _, model in models:
        for module in model.modules():
            if isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)):
                children = list(module.children())
                if len(children) >= 2 and len({type(c) for c in children}) == 1 and \
                        any(True for _ in children[0].parameters()) and len(children) > len(best):
                    best = children
    return best


def _checkpoint(blocks: list[Any]) -> None:
    from torch.utils.checkpoint import checkpoint

    for block in blocks:
        forward = block.forward

        @functools.wraps(forward)
        def wrapped(*args: Any, _f: Any = forward, **kwargs: Any) -> Any:
            return checkpoint(_f, *args, use_reentrant=False, **kwargs)

        block.forward = wrapped


def adapter_params(models: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Parameters of adapters (LoRA / PEFT names: lora_, adapter, prompt/prefix encoders)."""
    marks = ("lora_", "adapter", "prompt_encoder", "prefix_encoder", "ia3_")
    out = []
    for prefix, model in models:
        for name, p in model.named_parameters():
            if any(m in name.lower() for m in marks):
                out.append((prefix + name, p))
    return out


def _fused(optimizers: list[Any]) -> bool:
    changed = False
    for opt in optimizers:
        defaults = getattr(opt, "defaults", {})
        if "fused" not in defaults:
            continue
        for group in opt.param_groups:
            if not group.get("fused"):
                group["fused"] = True
                group["foreach"] = False
                changed = True
    return changed


def run_variants(entry: Callable[..., Any], entry_name: str, seed: int, kernels: str, base: dict[str, Any],
                 batch_size: int | None) -> list[dict[str, Any]]:
    from torch._subclasses.fake_tensor import FakeTensorMode

    from stabfix.verify.estimate_steps import FakeModeFailed, _cuda_optimizers, build, margin_for, run_steps

    rows: list[dict[str, Any]] = []

    def one(name: str, detail: str, prepare: Callable[[Any], str | None], kwargs: dict[str, Any] | None = None,
            transform: Callable[[Callable[[], Any]], Callable[[], Any]] | None = None) -> None:
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        try:
            built = build(entry, entry_name, seed, mode, kwargs or {})
            if kernels == "cuda":
                _cuda_optimizers(built.optimizers)
            skip = prepare(built)
            if skip:
                rows.append({"name": name, "peak_bytes": 0, "computed": False, "skipped": skip})
                return
            out = run_steps(built, mode, kernels, transform=transform, snapshot=False)
        except FakeModeFailed as exc:
            rows.append({"name": name, "peak_bytes": 0, "computed": False, "skipped": f"could not run: {exc}"})
            return
        except Exception as exc:  # noqa: BLE001 - a variant that cannot apply is skipped, not fatal
            rows.append({"name": name, "peak_bytes": 0, "computed": False,
                         "skipped": f"could not run: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
            return
        tensors = out["tensor_peak_bytes"]
        rows.append({"name": name, "peak_bytes": tensors + margin_for(tensors), "tensor_peak_bytes": tensors,
                     "computed": False, "detail": detail})

    one("bf16 autocast", "the step under torch.autocast(dtype=torch.bfloat16)", lambda b: None, transform=_autocast)

    def ckpt(b: Any) -> str | None:
        blocks = repeated_blocks(b.models)
        if not blocks:
            return "no repeated blocks (a ModuleList/Sequential of one block class) found"
        _checkpoint(blocks)
        return None

    one("activation checkpointing", "torch.utils.checkpoint (use_reentrant=False) around each repeated block", ckpt)
    if batch_size and batch_size >= 2:
        one("half micro-batch", f"batch_size={batch_size // 2} with twice the gradient accumulation "
            f"(the entry's batch_size keyword)", lambda b: None, kwargs={"batch_size": batch_size // 2})
    else:
        rows.append({"name": "half micro-batch", "peak_bytes": 0, "computed": False,
                     "skipped": "the entry takes no batch_size keyword (def build(device, batch_size=8))"})

    def fused(b: Any) -> str | None:
        return None if _fused(b.optimizers) else "no optimizer with a fused implementation, or already fused"

    one("fused optimizer", "fused=True (one kernel per step, no foreach temporaries)", fused)

    def adapters(b: Any) -> str | None:
        keep = {id(p) for _, p in adapter_params(b.models)}
        if not keep:
            return "the model has no adapter (LoRA/PEFT) parameters"
        for _, model in b.models:
            for p in model.parameters():
                if id(p) not in keep:
                    p.requires_grad_(False)
        return None

    one("adapters only", "requires_grad=False on every non-adapter parameter", adapters)

    # computed: ZeRO-3 / FSDP full sharding divides parameters, gradients and optimizer state by N
    bd = base.get("breakdown") or {}
    state = bd.get("parameters", 0) + bd.get("gradients", 0) + bd.get("optimizer_state", 0)
    tensors = base.get("tensor_peak_bytes", 0)
    for n in ZERO_GPUS:
        per_gpu = tensors - state + state // n
        rows.append({"name": f"ZeRO-3/FSDP across {n} GPUs", "peak_bytes": per_gpu + margin_for(per_gpu),
                     "tensor_peak_bytes": per_gpu, "computed": True,
                     "detail": "computed, not run: model state at the peak divided by N; activations unchanged; "
                               "gathered-layer buffers and communication buckets not counted"})
    return rows
