"""Device-resident caches: the long-lived containers (`containers`) that keep snapshots of accelerator
tensors, one more per new key or per call. `found()` lists each such container (`DeviceCache`: its key,
kind and uses, the stores that grow it with a tensor snapshot and what `values` says each stores, and whether
its uses say it holds tensors), in the order of its first such store. A store counts when it grows the
container, outside construction, forward hooks, data workers and parameter loops, and stores a tensor or
a call's result detached, cloned or computed with autograd off, certainly a tensor once the uses are
known (not an entry updated from itself, `c[k] = torch.cat([c[k], new])`, directly or through a local); a
container is none when it is cleared or evicted, its entries are updated in place, or (not on `self`) it
is built once to be handed over. `uncertain_entry(cache)`: a value stored into it, besides those stores,
that is not certainly a tensor (a rebinding, a store of something else; restores from `torch.load` hold
tensors). Asked by SF102.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.domain.container_uses import ContainerKey, ContainerUse, Store
from stabfix.model.domain.containers import stored_values
from stabfix.model.flow.values import Value
from stabfix.model.source.syntax import contains


@dataclass
class DeviceCache:
    key: ContainerKey
    kind: str
    uses: list[ContainerUse]
    stores: list[tuple[Store, Value]]  # the stores that keep a tensor snapshot, with what they store
    tensor_hint: bool  # the container's uses say it holds tensors (annotation, reads with `.clone()`)


class DeviceCaches:
    def __init__(self, containers, values) -> None:
        self.containers = containers
        self.values = values
        self._found: Optional[list[DeviceCache]] = None

    def found(self) -> list[DeviceCache]:
        if self._found is None:
            self._found = self._find()
        return self._found

    def _find(self) -> list[DeviceCache]:
        # Cheap checks first: only containers with a plausible store get their uses walked.
        by_container: dict[ContainerKey, list[tuple[Store, Value]]] = {}
        for store in self.containers.stores:
            kinds = self.containers.long_lived_kinds(store)
            if len(kinds) != 1:
                continue
            evidence = self._plausible_store(store, next(iter(kinds)))
            if evidence is not None:
                by_container.setdefault(store.container, []).append((store, evidence))
        if not by_container:
            return []
        uses = self.containers.uses(by_container)
        found = []
        for container, candidates in by_container.items():
            cache = self._decide_container(container, candidates, uses.get(container))
            if cache is not None and cache.stores:
                found.append(cache)
        return found

    def _decide_container(self, container: ContainerKey, candidates: list[tuple[Store, Value]],
                          uses: list[ContainerUse] | None) -> DeviceCache | None:
        if uses is None:
            return None
        kind = self.containers.container_kind(uses)
        if kind is None or self.containers.is_cleared(container, uses):
            return None
        if any(use.kind == "mutate" for use in uses):
            return None  # entries updated in place (`c[k].mul_(m).add_(x)`, `c[k] += x`): running state per key
        if not container.on_self and self.containers.built_once([store for store, _ in candidates], uses):
            return None
        tensor_hint = self.containers.holds_tensors(uses)
        stores = [(store, evidence) for store, evidence in candidates
                  if self._confirmed(store, evidence, tensor_hint, uses)]
        return DeviceCache(container, kind, uses, stores, tensor_hint)

    def _plausible_store(self, store: Store, kind: str) -> Value | None:
        """What the code says about the stored value, if the store can be a device-resident cache entry."""
        containers = self.containers
        if not containers.grows(store, kind):
            return None
        if containers.in_setup(store) or containers.in_hook(store) or containers.in_data_pipeline(store):
            return None  # filled once at construction, by forward hooks, or by (CPU) data workers
        if containers.iterates_parameters(store):
            return None  # EMA shadows, backups of parameters
        evidence = self.values.value_of(store.value)
        if evidence.host_or_bookkeeping or not (evidence.tensor or evidence.call):
            return None
        if not (evidence.snapshot or store.grad_off):
            return None
        return evidence

    def _confirmed(self, store: Store, evidence: Value, tensor_hint: bool, uses: list[ContainerUse]) -> bool:
        """With the container's uses known: the stored snapshot is certainly a tensor, and not an in-place update.

        Snapshot evidence was required before (detach/clone/no_grad): a value stored with its graph
        is SF103's concern, and a KV cache of one forward pass stores raw activations.
        """
        if any(contains(store.value, use.node) for use in uses):
            return False  # updates an entry from itself (`c[k] = torch.cat([c[k], new])`): a KV-cache step
        if self.containers.recomputes_own_entry(store, uses):
            return False  # the same, through a local: `old = c[k].clone(); c[k] = a * old + b` (a running update)
        # a snapshot of a call result put on the accelerator (`model(x).to(device)`, `.cuda()`, `.half()`):
        # what a forward pass returns, handled like a tensor
        return evidence.tensor or (evidence.call and (tensor_hint or evidence.placed or evidence.model_output))

    def uncertain_entry(self, cache: DeviceCache) -> cst.BaseExpression | None:
        """A value stored into the container, besides the cache's stores, that is not certainly a tensor
        (a read moved back with `.to(device)` must hold for every entry a read can return)."""
        covered = {id(node) for store, _ in cache.stores for node in (store.value, store.node)}
        for use in cache.uses:
            if use.kind == "rebind" and not self.containers.restores(use):
                return use.payload
            if use.kind != "store" or use.payload is None or id(use.payload) in covered or self.containers.restores(use):
                continue  # the cache's stores, and restores from `torch.load`, hold tensors
            for value in stored_values(use.payload, use.node):
                if value is None:
                    return use.payload
                evidence = self.values.value_of(value)
                if not evidence.tensor or evidence.not_tensor:
                    return value  # CPU tensors are fine: `.to(device)` moves them like the others
        return None
