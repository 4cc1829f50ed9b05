"""SF107 torch-load-without-map-location: `torch.load` restores tensors onto the device they were saved from.

A query over the model: which calls are `torch.load`/`torch.jit.load` (through imports and aliases,
`names.qualify`), and where their result goes (`flows.destinations`). A load is reported when it has no
`map_location` (a second positional argument, `map_location=`, or `**kwargs`) and its tensors are headed
somewhere else anyway: copied by `<x>.load_state_dict(...)` (a model, an optimizer: both copy into their
own tensors on their own device) or moved with `.to(...)`/`.cuda()`/`.cpu()`. There `map_location="cpu"`
changes no value; without it every rank of a DDP job materialises the checkpoint on the GPU it was saved
from (cuda:0) first, and a CPU-only machine cannot load a GPU checkpoint at all.

The fix adds `map_location="cpu"`: safe when every loaded tensor is copied into a module or an optimizer
(`load_state_dict` without `assign=True`), moved to a device, turned into a number or only looked at;
unsafe when an entry is used as it is (`ckpt["centroids"]` computed with, stored, returned), taken over by
`load_state_dict(..., assign=True)` or only cast (`.to(torch.float16)`): there the loaded device shows.
It is withheld (report only) when the loaded object as a whole is also used directly (stored, returned to
unseen code, passed on).

Left alone: loads whose result is used as it is (nothing shows its tensors are copied or moved), an
in-process round trip (`torch.save(x, f)` into the buffer or file the same function loads, or into the
object one statement created, `buffer = io.BytesIO()`, that the file's functions are handed), and a load that
has a sibling in the same function reading the same file with a `map_location` (a deliberate choice).
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.device_moves import has_map_location, with_map_location
from stabfix.model.calls.devices import to_call_target
from stabfix.model.flow.flows import Destination
from stabfix.model.source.syntax import code_of
from stabfix.model.calls.torch_ops import METHODS
from stabfix.shape import Shape
from stabfix.shape_queries import import_aliases

_MOVES = frozenset(name for name, op in METHODS.items() if op.kind == "move")  # as `flows.destinations` reads moves
LOADS = {"torch.load": "torch.load", "torch.serialization.load": "torch.load", "torch.jit.load": "torch.jit.load"}


class TorchLoadWithoutMapLocation(Checker):
    code = "SF107"
    tokens = ("load",)
    also_needs = (("torch",),)
    # reported calls resolve through this file's imports to torch's `load`: the file spells both words
    words = (("load",), ("torch",))
    needs = ("names", "flows", "values", "checkpoint_files")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a call whose name spells `load` (or that an import renames `load` to) and that does not say where
        # to load, when this
        # file copies or moves what it loads (`flows.destinations`: `load_state_dict`, `.to()`, `set_state_dict`...)
        calls = shape.calls_by_name()
        names = [name for name in calls if name is not None]
        renamed = shape.spellings("load")  # `from torch import load as restore`
        if not any(_unlocated(call) for name in names if "load" in name.lower() or name in renamed for call in calls[name]):
            return False
        aliases = import_aliases(shape)  # `from peft import set_peft_model_state_dict as restore`
        return any("state_dict" in name or name in _MOVES or name in aliases for name in names)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.flows = self.model.flows
        self.candidates: list[cst.Call] = []
        self.files = self.model.checkpoint_files

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        if "load" in name.lower() or type(func) is cst.Name:
            # a bare name may be `torch.load` under any alias (`from torch import load as restore`): every
            # candidate is resolved through the imports once the file is read
            self.candidates.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        loads = [(call, LOADS[q]) for call in self.candidates if (q := self.names.qualify(call.func)) in LOADS]
        located = [call for call, _ in loads if has_map_location(call)]
        files = self.files
        for call, which in loads:
            if has_map_location(call) or files.round_trip(call) or files.located_sibling(call, located) \
                    or files.written_from_host(call):
                continue
            destinations = self.flows.destinations(call)
            consumers = [d for d in destinations if d.kind in ("move", "adopt")
                         or d.kind == "restore" and not self.flows.restores_no_tensors(d.node)]
            if not consumers:
                continue
            fix = None
            if not any(d.kind == "other" and d.whole for d in destinations):
                why = self._where_the_device_shows(destinations)
                safety, description = ("unsafe", f'add map_location="cpu" (unsafe: {why})') if why else ("safe", 'add map_location="cpu"')
                fix = Fix(safety, description, {call: with_map_location(call)})
            self.report(call, self._message(call, which, consumers[0], fix is not None), fix)

    def _where_the_device_shows(self, destinations: list[Destination]) -> str | None:
        """Where a loaded tensor keeps the device it was loaded to, so that `map_location="cpu"` changes the
        program: taken over by `load_state_dict(..., assign=True)`, only cast by `.to(dtype)`, or an entry used
        as it is (computed with, stored, returned); None when every tensor is copied into a module or an
        optimizer, moved to a device, turned into a Python number or only looked at."""
        qualify = self.names.qualify
        for destination in destinations:
            node = destination.node
            if destination.kind == "adopt":
                return f"`{code_of(node, 60)}` takes the loaded tensors as they are, on the device they load to"
            if destination.kind == "restore" and self._own_restore(node):
                return f"`{code_of(node, 60)}` is this file's own method, which may keep the tensors as they are"
            if destination.kind == "move" and _is_to(node) and to_call_target(node, qualify)[0] == "dtype":
                return f"`{code_of(node, 60)}` only casts: the tensors stay on the device they load to"
            if destination.kind == "other" and not _to_number(node, self.names):
                what = f"`{node.name.value}` (a parameter) receives" if type(node) is cst.Param else f"`{code_of(node, 60)}` uses"
                return f"{what} loaded entries as they are, on the device they load to"
        return None

    def _own_restore(self, call: cst.CSTNode) -> bool:
        """`ema.load_state_dict(sd)` where `ema` is an instance of a class of this file that defines its own
        `load_state_dict` (it may store the dict, not copy it into parameters)."""
        if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
            return False
        callee = self.names.callable_of(call.func.value)
        if callee is None:
            return False
        owner = callee.module_class or (callee.node if type(callee.node) is cst.ClassDef else None)
        body = owner.body.body if owner is not None and type(owner.body) is cst.IndentedBlock else ()
        return any(type(item) is cst.FunctionDef and item.name.value == call.func.attr.value for item in body)

    def _message(self, call: cst.Call, which: str, consumer: Destination, fixable: bool) -> str:
        what = code_of(call, 50)
        if consumer.kind == "restore":
            then = f"`{code_of(consumer.node, 60)}` copies them into place anyway"
        else:
            then = f"`{code_of(consumer.node, 60)}` moves them anyway"
        advice = 'pass `map_location="cpu"`' if fixable else 'pass `map_location="cpu"` (or the device the code uses)'
        return (
            f"`{what}` has no `map_location`, so every tensor first lands on the device it was saved from "
            f"(cuda:0 on every DDP rank; an error on a CPU-only machine) before {then}; {advice}"
        )


def _unlocated(call: ast.Call) -> bool:
    """`has_map_location`'s negation on CPython's tree: at most one positional, no `map_location=`, no `**kw`."""
    positional = [arg for arg in call.args if type(arg) is not ast.Starred]
    return len(positional) <= 1 and not any(kw.arg in (None, "map_location") for kw in call.keywords)


def _is_to(call: cst.CSTNode) -> bool:
    return type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "to"


def _to_number(node: cst.CSTNode, names) -> bool:
    """`int(ckpt["step"])`, `ckpt["loss"].item()`: the entry becomes a Python number, on no device."""
    if type(node) is cst.Call and type(node.func) is cst.Name:
        return node.func.value in ("int", "float", "bool") and not names.bindings_of(node.func)
    return type(node) is cst.Attribute and node.attr.value in ("item", "tolist")
