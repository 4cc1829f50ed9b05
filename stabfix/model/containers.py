"""What a program does with a whole container: hand it over (save it, return it, load it into a model).

A dict or list filled entry by entry is either *state* that later code consults by key (a memo, a
cache, a feature bank) or a *result* built to be handed over as a whole: a converted state dict
written with `torch.save`/`save_file`, a merged LoRA state dict loaded into a model, a mapping a
function returns to its caller. The difference is in the data flow, not in the names: a result is
passed whole to a writer or returned, and nothing looks its entries up by key.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

# Functions that write their (first) argument out: the object leaves the program as a file.
WRITERS = frozenset(
    {
        "torch.save",
        "safetensors.torch.save_file",
        "safetensors.torch.save",
        "safetensors.numpy.save_file",
        "pickle.dump",
        "pickle.dumps",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "joblib.dump",
    }
)
# Methods whose receiver takes the object over: `model.load_state_dict(sd)` (torch.nn.Module),
# `accelerator.save(sd, path)` (accelerate), `model.save_pretrained(dir, state_dict=sd)` (transformers).
_TAKING_METHODS = frozenset({"load_state_dict", "save", "save_file", "save_pretrained", "save_model"})
# Syntax that only wraps the container on its way out: `{"model": sd}`, `[sd]`, `dict(sd)`.
_WRAPPERS = (cst.Dict, cst.DictElement, cst.List, cst.Tuple, cst.Element, cst.StarredDictElement, cst.Arg)


def writes_out(call: cst.Call, qualify) -> bool:
    """`torch.save(obj, p)`, `save_file(sd, p)`, `model.load_state_dict(sd)`: a call that takes an object over whole."""
    name = qualify(call.func) or ""
    if name in WRITERS:
        return True
    return isinstance(call.func, cst.Attribute) and not name and call.func.attr.value in _TAKING_METHODS


def hands_over(node: cst.CSTNode, parents: Sequence[cst.CSTNode], qualify) -> bool:
    """Whether this occurrence of a container passes the container itself out: it is returned, or is an
    argument of a writer (`torch.save({"model": sd}, p)`), possibly wrapped in a dict/list/tuple display
    or a copy (`dict(sd)`). `parents` are the ancestors of `node`, outermost first."""
    child: cst.CSTNode = node
    for parent in reversed(parents):
        if isinstance(parent, cst.Return):
            return parent.value is child
        if isinstance(parent, _WRAPPERS):
            child = parent
            continue
        if isinstance(parent, cst.Call) and any(arg is child for arg in parent.args):
            if writes_out(parent, qualify):
                return True
            if isinstance(parent.func, cst.Name) and parent.func.value in ("dict", "list") and not qualify(parent.func):
                child = parent  # a shallow copy of the container, still the same entries
                continue
        return False
    return False
