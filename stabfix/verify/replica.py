"""Rank-side facts for the cross-rank checks (`stabfix.verify.ranks`), gathered in each process of a
torchrun run by verify's optimizer step hooks.

Digests are exact: a CPU tensor's bytes go through blake2b; a tensor on an accelerator is reduced on
its device to two integer sums of its raw bits (plain and position-weighted, in chunks so the
transient memory stays small), so one changed bit changes the digest and nothing but a few numbers
crosses to the host. Integer sums do not depend on the reduction order, so equal tensors give equal
digests on every rank.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from typing import Any, Iterable

import torch

CHUNK_ELEMENTS = 1 << 20  # accelerator digests: at most 8 MiB of int64 scratch at a time
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_WEIGHT_MODULUS = 65521  # the largest prime below 2**16: position weights 1..65521


def _local(tensor: torch.Tensor) -> torch.Tensor:
    to_local = getattr(tensor, "to_local", None)  # DTensor (FSDP2, tensor parallel): this rank's shard
    return to_local() if callable(to_local) else tensor


def _raw_bits(tensor: torch.Tensor) -> torch.Tensor:
    flat = _local(tensor).detach().contiguous().reshape(-1)
    if flat.dtype.is_complex:
        flat = torch.view_as_real(flat).reshape(-1)
    return flat.view(_INT_OF_SIZE[flat.element_size()])


def _device_sums(bits: torch.Tensor) -> torch.Tensor:
    """Two int64 sums of `bits` on its device: plain, and weighted by position (wrapping on overflow)."""
    total = torch.zeros(2, dtype=torch.int64, device=bits.device)
    for start in range(0, bits.numel(), CHUNK_ELEMENTS):
        chunk = bits[start:start + CHUNK_ELEMENTS].to(torch.int64)
        weights = torch.arange(start, start + chunk.numel(), device=bits.device) % _WEIGHT_MODULUS + 1
        total[0] += chunk.sum()
        total[1] += (chunk * weights).sum()
    return total


def start_digests(tensors: Iterable[torch.Tensor | None]) -> list[str | tuple[str, torch.Tensor]]:
    """Each tensor's digest, or for a tensor on an accelerator its (head, device sums) still on the
    device (queued, no synchronisation): `finish_digests` reads them all back with one transfer."""
    out: list[str | tuple[str, torch.Tensor]] = []
    with torch.no_grad():
        for tensor in tensors:
            if tensor is None:
                out.append("-")
                continue
            bits = _raw_bits(tensor)
            head = f"{tuple(bits.shape)}{tensor.dtype}"
            if bits.device.type == "cpu":
                data = head.encode() + memoryview(bits.numpy()).cast("B")
                out.append(hashlib.blake2b(data, digest_size=8).hexdigest())
            else:
                out.append((head, _device_sums(bits)))
    return out


def finish_digests(started: list[str | tuple[str, torch.Tensor]]) -> list[str]:
    pending = [item for item in started if not isinstance(item, str)]
    if not pending:
        return list(started)  # type: ignore[arg-type]
    values = iter(torch.stack([sums for _, sums in pending]).tolist())
    return [item if isinstance(item, str)
            else hashlib.blake2b(f"{item[0]}{next(values)}".encode(), digest_size=8).hexdigest()
            for item in started]


def digests(tensors: Iterable[torch.Tensor | None]) -> list[str]:
    """One short exact digest per tensor (`-` for None), with one host transfer for all the
    accelerator tensors together."""
    return finish_digests(start_digests(tensors))


def combined(parts: Iterable[str]) -> str:
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()


def optimizer_params(optimizers: Iterable[torch.optim.Optimizer]) -> list[torch.Tensor]:
    """Every parameter the optimizers hold, in their param_groups' order (the same on every rank
    running the same code), each once."""
    seen: set[int] = set()
    params = []
    for optimizer in optimizers:
        for group in optimizer.param_groups:
            for param in group["params"]:
                if id(param) not in seen:
                    seen.add(id(param))
                    params.append(param)
    return params


def is_sharded(param: torch.Tensor) -> bool:
    """FSDP's flat parameter shards and DTensors sharded on some mesh dimension."""
    if type(param).__name__ == "FlatParameter" or getattr(param, "_is_flat_param", False):
        return True
    placements = getattr(param, "placements", None)
    return bool(placements) and any(type(p).__name__ in ("Shard", "_StridedShard") for p in placements)


def layout(params: list[torch.Tensor]) -> str:
    return combined(f"{tuple(p.shape)}{p.dtype}" for p in params)


def param_names(params: list[torch.Tensor], modules: Iterable[torch.nn.Module]) -> list[str]:
    """The parameters' qualified names in `modules` (DDP's `module.` prefix dropped); a parameter no
    module holds is named by its place in the optimizer and its shape."""
    by_id: dict[int, str] = {}
    for module in modules:
        for name, param in module.named_parameters(remove_duplicate=True):
            by_id.setdefault(id(param), name.removeprefix("module."))
    return [by_id.get(id(p), f"optimizer parameter #{i} {list(p.shape)} (in no module)") for i, p in enumerate(params)]


def state_fields(params: list[torch.Tensor], what: str) -> dict[str, Any]:
    """`what` is "params" (values) or "grads" (their gradients): the combined digest and each one."""
    each = digests(params if what == "params" else (p.grad for p in params))
    return {what: combined(each), ("param_digests" if what == "params" else "grad_digests"): each}


class BatchRecorder:
    """Digests of the tensors given to the outermost calls of modules with parameters (the models'
    forward) since the last `take()`: what this rank trained on in the step. Uses torch's global
    module hooks, so no model needs to be known in advance."""

    def __init__(self) -> None:
        self._depth = 0
        self._parts: list[str | tuple[str, torch.Tensor]] = []  # read back at `take()`, not per call
        self._handles: list[Any] = []
        self.roots: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()  # the outermost models called
        self._with_parameters: "weakref.WeakKeyDictionary[torch.nn.Module, bool]" = weakref.WeakKeyDictionary()

    def install(self) -> None:
        from torch.nn.modules import module as nn_module

        self._handles.append(nn_module.register_module_forward_pre_hook(self._enter))
        try:
            handle = nn_module.register_module_forward_hook(self._leave, with_kwargs=True, always_call=True)
        except TypeError:  # an older torch without kwargs for global hooks
            handle = nn_module.register_module_forward_hook(self._leave_positional, always_call=True)
        self._handles.append(handle)

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _enter(self, module: torch.nn.Module, args: Any) -> None:
        self._depth += 1

    def _leave(self, module: torch.nn.Module, args: Any, kwargs: Any, output: Any) -> None:
        self._depth = max(0, self._depth - 1)  # 0 also when installed while a forward ran
        if self._depth == 0 and self._has_parameters(module):
            self.roots.add(module)
            self._record((args, kwargs))

    def _has_parameters(self, module: torch.nn.Module) -> bool:
        """A model, not a loss module: a loss's inputs are the model's outputs, which change with the
        parameters, so they would hide a batch seen again."""
        known = self._with_parameters.get(module)
        if known is None:
            known = self._with_parameters[module] = next(module.parameters(), None) is not None
        return known

    def _leave_positional(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self._leave(module, args, {}, output)

    def _record(self, inputs: Any) -> None:
        from torch.utils._pytree import tree_leaves

        tensors = [leaf for leaf in tree_leaves(inputs) if isinstance(leaf, torch.Tensor)]
        if tensors:
            from stabfix.verify.tracker import untracked

            with untracked():  # inside the step: the digest's scratch is not the step's memory
                self._parts.extend(start_digests(tensors))

    def take(self) -> str | None:
        """The digest of everything recorded since the last call (None: no module got a tensor)."""
        parts, self._parts = self._parts, []
        return combined(finish_digests(parts)) if parts else None


def distributed_run() -> bool:
    """This process is one of several ranks (torchrun sets WORLD_SIZE for every worker)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


class ReplicaProbe:
    """What the cross-rank checks need from one rank, one record per optimizer step. The verify
    child installs it when `distributed_run()` and calls `after_step(optimizer)` from its optimizer
    step post-hook: by then DDP has reduced the gradients (they are still there: nothing has zeroed
    them yet) and the optimizer has updated the parameters."""

    def __init__(self) -> None:
        self.batches = BatchRecorder()
        self._named: set[int] = set()  # optimizers whose parameter names were sent

    def install(self) -> None:
        self.batches.install()

    def remove(self) -> None:
        self.batches.remove()

    def after_step(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        params = optimizer_params([optimizer])
        fields: dict[str, Any] = {
            **state_fields(params, "params"),
            **state_fields(params, "grads"),
            "batch": self.batches.take(),
            "layout": layout(params),
            "sharded": any(is_sharded(p) for p in params),
        }
        if id(optimizer) not in self._named:  # names once per optimizer: the same on every step
            fields["names"] = param_names(params, list(self.batches.roots))
            self._named.add(id(optimizer))
        return fields
