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

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.device_moves import has_map_location, with_map_location
from stabfix.model.calls.devices import to_call_target
from stabfix.model.flow.flows import Destination
from stabfix.model.source.origins import created_by, passed_argument
from stabfix.model.source.syntax import code_of
from stabfix.model.source.traversal import children

LOADS = {"torch.load": "torch.load", "torch.serialization.load": "torch.load", "torch.jit.load": "torch.jit.load"}
SAVES = frozenset({"torch.save", "torch.serialization.save", "torch.jit.save"})


class TorchLoadWithoutMapLocation(Checker):
    code = "SF107"
    tokens = ("load",)
    also_needs = (("torch",),)
    # reported calls resolve through this file's imports to torch's `load`: the file spells both words
    words = (("load",), ("torch",))
    needs = ("names", "flows", "values")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.names = self.model.names
        self.flows = self.model.flows
        self.candidates: list[cst.Call] = []
        self._saves_found: list[cst.Call] | None = None
        self._saves_in: dict[int, list[cst.Call]] | None = None
        self._located_loads: dict[tuple[int, str], list[cst.Call]] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if "load" in name.lower():
            self.candidates.append(node)  # aliases (`from torch import load as tload`) resolve once the file is read

    def leave_Module(self, original_node: cst.Module) -> None:
        loads = [(call, LOADS[q]) for call in self.candidates if (q := self.names.qualify(call.func)) in LOADS]
        for call, which in loads:
            if has_map_location(call) or self._round_trip(call) or self._sibling_with_location(call, loads) \
                    or self._written_from_host(call):
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
                what = f"`{node.name.value}` (a parameter) receives" if isinstance(node, cst.Param) else f"`{code_of(node, 60)}` uses"
                return f"{what} loaded entries as they are, on the device they load to"
        return None

    def _own_restore(self, call: cst.CSTNode) -> bool:
        """`ema.load_state_dict(sd)` where `ema` is an instance of a class of this file that defines its own
        `load_state_dict` (it may store the dict, not copy it into parameters)."""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return False
        callee = self.names.callable_of(call.func.value)
        if callee is None:
            return False
        owner = callee.module_class or (callee.node if isinstance(callee.node, cst.ClassDef) else None)
        body = owner.body.body if owner is not None and isinstance(owner.body, cst.IndentedBlock) else ()
        return any(isinstance(item, cst.FunctionDef) and item.name.value == call.func.attr.value for item in body)

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

    def _round_trip(self, call: cst.Call) -> bool:
        """`torch.save(obj, f)` ... `torch.load(f)` in one function (a BytesIO buffer, a temporary file): an
        in-process copy that comes back onto the devices it left from, on purpose."""
        source = _first_argument(call)
        if source is None:
            return False
        text = code_of(source, 200)
        function = self.flows.enclosing_function(call)
        for other in self._saves_by_function().get(id(function), []):
            target = _argument(other, 1, "f")
            if target is not None and code_of(target, 200) == text:
                return True
        # the object one statement created (`buffer = io.BytesIO()`), saved into and loaded from in any
        # functions of the file it is handed to
        loaded = created_by(self.names, self.flows.calls(), source)
        saved = [created_by(self.names, self.flows.calls(), target)
                 for other in self._saves() if (target := _argument(other, 1, "f")) is not None]
        return bool(loaded) and any(written and loaded <= written for written in saved)

    def _saves_by_function(self) -> dict[int, list[cst.Call]]:
        """id(enclosing function) -> the saves written in it (each load asks for its own function's)."""
        if self._saves_in is None:
            self._saves_in = {}
            for other in self._saves():
                self._saves_in.setdefault(id(self.flows.enclosing_function(other)), []).append(other)
        return self._saves_in

    def _written_from_host(self, call: cst.Call) -> bool:
        """The file this loads is one the file itself writes from host memory (`torch.save(feats.cpu(),
        os.path.join(out, "feats.pth"))` ... `torch.load(os.path.join(cache, "feats.pth"))`: the same file
        name): its tensors were saved from the CPU and load back there."""
        source = _first_argument(call)
        file_names = _file_names(source) if source is not None else set()
        if not file_names:
            return False
        for other in self._saves():
            saved, target = _argument(other, 0, "obj"), _argument(other, 1, "f")
            if saved is not None and target is not None and file_names & _file_names(target) \
                    and self.model.values.value_of(saved).host:
                return True
        return False

    def _saves(self) -> list[cst.Call]:
        if self._saves_found is None:  # asked for every load: one pass over the file's calls, not one each
            self._saves_found = [other for other in self.flows.calls() if self.names.qualify(other.func) in SAVES]
        return self._saves_found

    def _sibling_with_location(self, call: cst.Call, loads: list[tuple[cst.Call, str]]) -> bool:
        """`torch.load(p)` next to `torch.load(p, map_location="cpu")` in the same function (a device check's
        two branches): the author chose where each loads."""
        if self._located_loads is None:  # (id(function), source text) -> its loads with a map_location, once per file
            self._located_loads = {}
            for other, _ in loads:
                if has_map_location(other):
                    for place in self._load_places(other):
                        self._located_loads.setdefault(place, []).append(other)
        return any(other is not call for place in self._load_places(call) for other in self._located_loads.get(place, []))

    def _load_places(self, call: cst.Call) -> set[tuple[int, str]]:
        """(function, path text) where a load reads its file: its own function, and where the load sits in a
        helper of the file reading a parameter (`def read(path): return torch.load(path)`), each caller's
        function with what it passes."""
        source = _first_argument(call)
        if source is None:
            return set()
        function = self.flows.enclosing_function(call)
        places = {(id(function), code_of(source, 200))}
        bindings = self.names.reaching(source) if isinstance(source, cst.Name) else []
        if function is not None and len(bindings) == 1 and bindings[0].kind == "param" and bindings[0].scope.node is function:
            for caller in self.names.calls_running(function, self.flows.calls()):
                passed = passed_argument(function, caller, source.value)
                if passed is not None:
                    places.add((id(self.flows.enclosing_function(caller)), code_of(passed, 200)))
        return places


def _is_to(call: cst.CSTNode) -> bool:
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"


def _to_number(node: cst.CSTNode, names) -> bool:
    """`int(ckpt["step"])`, `ckpt["loss"].item()`: the entry becomes a Python number, on no device."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.func.value in ("int", "float", "bool") and not names.bindings_of(node.func)
    return isinstance(node, cst.Attribute) and node.attr.value in ("item", "tolist")


def _first_argument(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "f":
            return arg.value
    return None


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument passed by this keyword, or at this position."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position] if len(positional) > position else None


def _file_names(path: cst.BaseExpression) -> set[str]:
    """The file names a path expression spells out: string literals with an extension (`"feats.pth"`,
    the last part of `"out/feats.pth"`), not directories or bare words."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [path]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleString):
            name = node.evaluated_value
            name = name.rsplit("/", 1)[-1] if isinstance(name, str) else ""
            if "." in name.strip(".") and "{" not in name:
                found.add(name)
        stack.extend(children(node))
    return found
