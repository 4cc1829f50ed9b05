"""Name who holds tensors that survive training steps (child process only; imports torch).

Finds the Python tensors whose storage is one of the survivors (one pass over `gc.get_objects()`),
then walks `gc.get_referrers` upwards, level by level (one heap scan per level for all tensors at
once), until it reaches something with a name: an attribute of an instance (`TextCache._cache`), a
module global (`mymodule.CACHE`), a class attribute, a closure variable or a local variable of a
function still running (`losses` in `main()`: a training loop run by `stabfix verify -- COMMAND`
is on the stack when the holders are looked for). Tensors that no Python object references are
reported as held by the autograd graph or C++ code.
"""

from __future__ import annotations

import gc
import sys
import types
import warnings
from typing import Any

import torch

from stabfix.verify.frame_locals import frame_locals
from stabfix.verify.tracker import is_internal_file

MAX_DEPTH = 7
_CONTAINERS = (list, tuple, set, frozenset)


def _short_key(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


# Path segments, from the holder down to the tensor:
#   ("key", k)   an item of a dict (an attribute when that dict is an instance's __dict__)
#   ("attr", n)  an attribute (slots, inline values)
#   ("index", i) an item of a list/tuple;  ("item", None) a member of a set/other container
#   ("cell", n)  a closure variable
Segment = tuple[str, Any]


def _render(owner: str, path: list[Segment], owner_dict: bool) -> tuple[str, str]:
    """(short holder name, full path). The dict right under an owner is its __dict__, so its key is
    an attribute; `Model._buffers['x']` (nn.Module registries) reads as `Model.x`."""
    segs = list(path)
    if owner_dict and segs and segs[0][0] == "key":
        segs[0] = ("attr", segs[0][1])
    registries = (("attr", "_buffers"), ("attr", "_parameters"), ("attr", "_modules"))
    if len(segs) >= 2 and segs[0] in registries and segs[1][0] == "key":
        segs = [("attr", segs[1][1])] + segs[2:]
    text = []
    for kind, value in segs:
        if kind == "attr":
            text.append(f".{value}")
        elif kind == "key":
            text.append(f"[{_short_key(value)}]")
        elif kind == "index":
            text.append(f"[{value}]")
        elif kind == "cell":
            text.append(f".<closure {value}>")  # rendered below for the short name
        else:
            text.append("[…]")
    short = owner + (text[0] if text and segs[0][0] in ("attr", "cell") else "")
    return short, owner + "".join(text)


def _slot_or_attr_name(owner: Any, child: Any) -> str | None:
    d = getattr(owner, "__dict__", None)
    if isinstance(d, dict):
        for k, v in d.items():
            if v is child:
                return str(k)
    for cls in type(owner).__mro__:
        for slot in getattr(cls, "__slots__", ()) or ():
            if isinstance(slot, str) and getattr(owner, slot, None) is child:
                return slot
    return None


def _running_locals() -> dict[int, tuple[str, str]]:
    """id of each value a running function's local variable holds -> (function, variable), over the
    stacks of every thread, innermost frame first; frames of torch, stabfix and the stdlib left out."""
    found: dict[int, tuple[str, str]] = {}
    tops = list(sys._current_frames().values())
    try:
        for frame in tops:
            while frame is not None:
                code = frame.f_code
                if not is_internal_file(code.co_filename):
                    for name, value in frame_locals(frame):
                        found.setdefault(id(value), (code.co_qualname if hasattr(code, "co_qualname") else code.co_name, name))
                frame = frame.f_back
    finally:
        # this function's own frame is one of them: held by a local, it would be a cycle that keeps
        # its callers' frames, and the tensors they hold, alive until a full collection
        tops.clear()
    return found


def _render_local(function: str, variable: str, path: list[Segment]) -> tuple[str, str]:
    inner = _render("", path, False)[1]
    return f"local {variable} in {function}()", f"{variable}{inner} (local in {function}())"


def describe_holders(targets: list[Any], ignore: set[int]) -> list[tuple[str, str] | None]:
    """For each target object, (holder, path) of the first named holder above it, or None."""
    results: list[tuple[str, str] | None] = [None] * len(targets)
    # a running function's local is named only when no attribute, global or closure holds the object
    local_values = _running_locals()
    held_by_local: list[tuple[str, str] | None] = [None] * len(targets)
    ignore = set(ignore) | {id(held_by_local)}
    frontier: list[tuple[int, Any, list[Segment]]] = [(i, t, []) for i, t in enumerate(targets)]
    visited: set[tuple[int, int]] = {(i, id(t)) for i, t in enumerate(targets)}
    ignore = set(ignore) | {id(targets), id(frontier), id(results), id(visited)}
    for _depth in range(MAX_DEPTH):
        open_entries = [e for e in frontier if results[e[0]] is None]
        if not open_entries:
            break
        for index, obj, path in open_entries:
            local = local_values.get(id(obj))
            if local is not None and held_by_local[index] is None:
                held_by_local[index] = _render_local(local[0], local[1], path)
        objs = [e[1] for e in open_entries]
        by_child: dict[int, list[tuple[int, Any, list[Segment]]]] = {}
        for e in open_entries:
            by_child.setdefault(id(e[1]), []).append(e)
        next_frontier: list[tuple[int, Any, list[Segment]]] = []
        local_ids = {id(open_entries), id(objs), id(by_child), id(next_frontier), id(frontier)}
        local_ids |= {id(v) for v in by_child.values()} | {id(e) for e in open_entries}
        local_ids |= {id(e[2]) for e in open_entries}
        referrers = gc.get_referrers(*objs)
        local_ids.add(id(referrers))
        for r in referrers:
            if id(r) in ignore or id(r) in local_ids or isinstance(r, (types.FrameType, types.CodeType)):
                continue
            for child in gc.get_referents(r):
                entries = by_child.get(id(child))
                if not entries:
                    continue
                for index, obj, path in entries:
                    if results[index] is not None:
                        continue
                    owner, owner_dict, seg = _name_step(r, obj)
                    new_path = [seg, *path] if seg is not None else path
                    if owner is not None:
                        if isinstance(r, types.FunctionType) and len(new_path) >= 2 and new_path[0][0] == "index":
                            freevars = r.__code__.co_freevars
                            i = new_path[0][1]
                            var = freevars[i] if i < len(freevars) else "?"
                            new_path = [("cell", var), *new_path[2:]]
                        results[index] = _render(owner, new_path, owner_dict)
                        continue
                    if seg is None or (index, id(r)) in visited:
                        continue
                    visited.add((index, id(r)))
                    next_frontier.append((index, r, new_path))
        frontier = next_frontier
        del referrers, objs, open_entries, by_child
    return [found if found is not None else local for found, local in zip(results, held_by_local)]


def _name_step(r: Any, child: Any) -> tuple[str | None, bool, Segment | None]:
    """Is r a named owner of child? -> (owner name or None, child is r's __dict__, segment)."""
    if isinstance(r, types.ModuleType):
        if getattr(r, "__dict__", None) is child:
            return r.__name__, True, None
        return None, False, None
    if isinstance(r, type):
        if isinstance(child, dict) and set(child) == set(vars(r)):
            return r.__qualname__, True, None
        return None, False, None
    if isinstance(r, types.FunctionType):
        if r.__closure__ is not None and r.__closure__ is child:
            return r.__qualname__, False, None
        return None, False, None
    if isinstance(r, (types.MethodType, types.BuiltinFunctionType)):
        return None, False, None
    if isinstance(r, types.CellType):
        return None, False, ("cell", "")
    if isinstance(r, dict):
        for k, v in r.items():
            if v is child:
                return None, False, ("key", k)
        return None, False, None  # the tensor is a key, or r only references it internally
    if isinstance(r, tuple) and r and all(isinstance(c, types.CellType) for c in r):
        # a closure tuple: name the variable once we reach the function
        for i, c in enumerate(r):
            if c is child:
                return None, False, ("index", i)
    if isinstance(r, _CONTAINERS):
        if isinstance(r, (list, tuple)):
            for i, v in enumerate(r):
                if v is child:
                    return None, False, ("index", i)
        return None, False, ("item", None)
    if isinstance(r, torch.Tensor):
        return None, False, None  # a view's base or a tensor attribute: not a holder
    d = getattr(r, "__dict__", None)
    if d is child:
        return type(r).__qualname__, True, None
    name = _slot_or_attr_name(r, child)
    if name is not None:
        return type(r).__qualname__, False, ("attr", name)
    if hasattr(r, "__iter__") and not isinstance(r, (str, bytes)):
        return None, False, ("item", None)  # deque and other containers
    return None, False, None


def find_holders(
    groups: dict[Any, set[int]], ignore: set[int] | None = None, samples: int = 3
) -> dict[Any, dict[str, Any]]:
    """groups: group key -> storage keys (id of the storage object). Returns group key ->
    {"holders": [short names], "paths": [full paths], "python_refs": bool}. Call after gc.collect()."""
    wanted: dict[int, Any] = {}
    for gkey, keys in groups.items():
        for k in keys:
            wanted[k] = gkey
    per_group: dict[Any, list[Any]] = {g: [] for g in groups}
    objs = gc.get_objects()
    try:
        with warnings.catch_warnings():  # isinstance() on deprecated torch objects warns
            warnings.simplefilter("ignore")
            for o in objs:
                if not isinstance(o, torch.Tensor):
                    continue
                try:
                    k = id(o.untyped_storage())
                except Exception:  # noqa: BLE001 - storage-less tensor types
                    continue
                gkey = wanted.get(k)
                if gkey is not None and len(per_group[gkey]) < samples:
                    per_group[gkey].append(o)
    finally:
        del objs
    targets: list[Any] = []
    owners: list[Any] = []
    for gkey, ts in per_group.items():
        for t in ts:
            targets.append(t)
            owners.append(gkey)
    skip = set(ignore or ()) | {id(per_group), id(owners), id(wanted), id(groups)}
    skip |= {id(ts) for ts in per_group.values()}
    described = describe_holders(targets, skip)
    out: dict[Any, dict[str, Any]] = {}
    for gkey in groups:
        out[gkey] = {"holders": [], "paths": [], "python_refs": bool(per_group[gkey])}
    for gkey, found in zip(owners, described):
        if found is None:
            continue
        short, path = found
        if short not in out[gkey]["holders"]:
            out[gkey]["holders"].append(short)
        if path not in out[gkey]["paths"]:
            out[gkey]["paths"].append(path)
    targets.clear()
    unnamed = {gkey: groups[gkey] for gkey in groups if not out[gkey]["holders"]}
    if unnamed:
        for gkey, (short, path) in _graph_holders(unnamed, skip).items():
            out[gkey]["holders"].append(f"{short} (autograd graph)")
            out[gkey]["paths"].append(f"{path}.grad_fn → saved tensor")
    return out


# Autograd nodes visited per search at most: a graph kept alive across many steps has thousands.
MAX_GRAPH_NODES = 50_000


def _graph_holders(groups: dict[Any, set[int]], ignore: set[int]) -> dict[Any, tuple[str, str]]:
    """Storages that no Python object names may be tensors an autograd node saved for backward (a
    `log_softmax` output kept by the graph of a loss summed into `self.total`). Walk the graphs of the
    Python tensors that have one, find the nodes that saved one of these storages, and name the holder
    of the tensor whose graph it is: `Trainer.running_nll (autograd graph)`."""
    wanted = {k: gkey for gkey, keys in groups.items() for k in keys}
    roots_of: dict[Any, list[Any]] = {}
    seen_nodes: set[int] = set()
    kept: list[Any] = []
    budget = MAX_GRAPH_NODES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        roots = [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and getattr(o, "grad_fn", None) is not None]
    for root in roots:
        if budget <= 0:
            break
        stack = [root.grad_fn]
        while stack and budget > 0:
            node = stack.pop()
            if node is None or id(node) in seen_nodes:
                continue
            seen_nodes.add(id(node))
            kept.append(node)  # keep the wrapper alive: a freed one's id may be reused by the next
            budget -= 1
            for key in _saved_storages(node):
                gkey = wanted.get(key)
                if gkey is not None and len(roots_of.setdefault(gkey, [])) < 64 and all(r is not root for r in roots_of[gkey]):
                    roots_of[gkey].append(root)
            stack.extend(next_node for next_node, _ in getattr(node, "next_functions", ()) if next_node is not None)
    del roots, kept
    found: dict[Any, tuple[str, str]] = {}
    skip = set(ignore) | {id(roots_of), id(seen_nodes), id(wanted)} | {id(v) for v in roots_of.values()}
    for gkey, tensors in roots_of.items():
        named = [d for d in describe_holders(tensors, skip) if d is not None]
        if named:
            found[gkey] = named[0]
    return found


_SAVED_NAMES: dict[str, tuple[str, ...]] = {}


def _saved_storages(node: Any) -> list[int]:
    """Storage keys of the tensors an autograd node still saves (freed ones raise and are skipped)."""
    kind = type(node).__name__
    names = _SAVED_NAMES.get(kind)
    if names is None:
        names = _SAVED_NAMES[kind] = tuple(n for n in dir(node) if n.startswith("_saved_"))
    keys = []
    for name in names:
        try:
            value = getattr(node, name)
        except Exception:  # noqa: BLE001 - released after backward
            continue
        for tensor in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(tensor, torch.Tensor):
                try:
                    keys.append(id(tensor.untyped_storage()))
                except Exception:  # noqa: BLE001
                    continue
    return keys
