"""Who holds the tensors that are alive before step 1 besides the models' parameters and buffers
(child process only; imports torch): a deep copy of the model kept by a framework, an EMA copy, a
target network the entry did not return, the data, a cache.

Modules outside the returned models are found first (`gc.get_objects()`), the outermost of them
each counted with its parameters and buffers and named by its holder (`EMA.shadow`); the remaining
tensors are named one by one by their holder (`stabfix.verify.holders.describe_holders`) and summed
per holder. Storages are counted once, so a tensor and its views are one entry.
"""

from __future__ import annotations

import gc
import itertools
import warnings
from typing import Any

import torch

from stabfix.verify.holders import describe_holders

LARGEST = 3  # holders reported
MIN_SHARE = 0.01  # of the live bytes before step 1: smaller holders are left out
MAX_LOOSE = 256  # the largest loose storages named one by one (each costs part of a heap walk)


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return id(t.untyped_storage())
    except Exception:  # noqa: BLE001 - sparse, nested and other storage-less layouts
        return None


def largest_holders(tracker: Any, models: list[tuple[str, torch.nn.Module]], live_before: int) -> list[dict[str, Any]]:
    """The largest holders of the live tensors before step 1 other than the models' state, largest
    first: {"holder", "kind" ("module": a module outside the returned models, with its parameters and
    buffers; "tensors"), "type" (the module's class), "bytes", "tensors" (storages)}."""
    # the models' state, and their gradients (alive when this runs at the first optimizer step)
    state = [t for _, m in models for t in itertools.chain(m.parameters(), m.buffers())]
    in_models = {_storage_key(t) for t in state} | {_storage_key(p.grad) for p in state if p.grad is not None}
    del state
    others = {key: ref.nbytes for key, ref in tracker.refs.items()
              if ref.info[0] == 0 and key not in in_models and ref() is not None}
    floor = max(1, int(MIN_SHARE * live_before))
    if sum(others.values()) < floor:
        return []
    own = {id(sub) for _, m in models for sub in m.modules()}
    foreign, tensors = _modules_and_tensors(own)
    inner = {id(sub) for m in foreign for sub in m.modules() if sub is not m}
    roots = [m for m in foreign if id(m) not in inner]
    del foreign
    claimed: set[int] = set()
    rows: list[dict[str, Any]] = []
    targets: list[Any] = []  # what to name: the module roots, then one tensor of each loose storage
    for root in roots:
        keys = {_storage_key(t) for t in itertools.chain(root.parameters(), root.buffers())}
        keys = {k for k in keys if k in others and k not in claimed}
        if not keys:
            continue
        claimed |= keys
        row = {"holder": type(root).__name__, "kind": "module", "type": type(root).__name__,
               "bytes": sum(others[k] for k in keys), "tensors": len(keys)}
        if row["bytes"] >= floor:
            rows.append(row)
            targets.append(root)
    del roots
    sample: dict[int, torch.Tensor] = {}
    for t in tensors:
        key = _storage_key(t)
        if key in others and key not in claimed and key not in sample:
            sample[key] = t
    del tensors
    loose = sorted(sample, key=lambda k: -others[k])[:MAX_LOOSE]
    targets += [sample[k] for k in loose]
    sample.clear()
    # one walk up the referrers for all of them (each level is a scan of the whole heap)
    named = describe_holders(targets, ignore={id(targets), id(sample), id(loose), id(rows)})
    del targets
    for row, name in zip(rows, named):
        if name:
            row["holder"] = name[0]
    by_holder: dict[str, dict[str, Any]] = {}
    for key, name in zip(loose, named[len(rows):]):
        holder = name[0] if name else "(no named holder)"
        row = by_holder.setdefault(holder, {"holder": holder, "kind": "tensors", "type": None, "bytes": 0,
                                            "tensors": 0})
        row["bytes"] += others[key]
        row["tensors"] += 1
    rows += [r for r in by_holder.values() if r["bytes"] >= floor]
    rows.sort(key=lambda r: (-r["bytes"], r["holder"]))
    return rows[:LARGEST]


def _modules_and_tensors(own: set[int]) -> tuple[list[torch.nn.Module], list[torch.Tensor]]:
    """The modules that are not `own` and the tensors on the heap, in one pass: the class of each object
    is looked at once per class (isinstance() on torch's classes is slow over millions of objects)."""
    kind_of: dict[type, int] = {}
    modules: list[torch.nn.Module] = []
    tensors: list[torch.Tensor] = []
    with warnings.catch_warnings():  # issubclass() on deprecated torch classes may warn
        warnings.simplefilter("ignore")
        for o in gc.get_objects():
            cls = type(o)
            kind = kind_of.get(cls)
            if kind is None:
                kind = kind_of[cls] = (1 if issubclass(cls, torch.nn.Module)
                                       else 2 if issubclass(cls, torch.Tensor) else 0)
            if kind == 1 and id(o) not in own:
                modules.append(o)
            elif kind == 2:
                tensors.append(o)
    return modules, tensors
