"""Where a file saves and loads checkpoints with `torch.save`/`torch.load` (`torch.jit` too), and which
loads read back what the file itself wrote: an in-process round trip (`torch.save(x, f)` into the buffer or
file the same function loads, or into the object one statement created, `buffer = io.BytesIO()`, that the
file's functions are handed: `source/origins.py`), a file name the file writes from host memory, and a load
with a sibling reading the same file with a `map_location` in the same function (or, for a load in a helper
reading its parameter, in each caller's function with what it passes). Asked by SF107.
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.source.origins import created_by, passed_argument
from stabfix.model.source.syntax import code_of
from stabfix.model.source.node_fields import children

SAVES = frozenset({"torch.save", "torch.serialization.save", "torch.jit.save"})
# a call `a.b.save(...)` qualifies to a name ending in its own attribute: only a bare name (an alias) or one
# of these attributes can be a save, and the file's other calls are not looked up
_SAVE_ATTRIBUTES = frozenset(qualified.rsplit(".", 1)[1] for qualified in SAVES)


class CheckpointFiles:
    def __init__(self, names, flows, values) -> None:
        self.names = names
        self.flows = flows
        self.values = values
        self._saves_found: list[cst.Call] | None = None
        self._saves_in: dict[int, list[cst.Call]] | None = None
        self._located_loads: dict[tuple[int, str], list[cst.Call]] | None = None
        self._saved_into: list | None = None  # `_saved_objects`

    def round_trip(self, call: cst.Call) -> bool:
        """`torch.save(obj, f)` ... `torch.load(f)` in one function (a BytesIO buffer, a temporary file): an
        in-process copy that comes back onto the devices it left from, on purpose."""
        source = _first_argument(call)
        if source is None:
            return False
        function = self.flows.enclosing_function(call)
        saves_here = self._saves_by_function().get(id(function), [])
        text = code_of(source, 200) if saves_here else None  # (the text is asked only where a save may match it)
        for other in saves_here:
            target = _argument(other, 1, "f")
            if target is not None and code_of(target, 200) == text:
                return True
        # the object one statement created (`buffer = io.BytesIO()`), saved into and loaded from in any
        # functions of the file it is handed to
        loaded = created_by(self.names, self.flows.calls(), source)
        return bool(loaded) and any(written and loaded <= written for written in self._saved_objects())

    def _saved_objects(self) -> list:
        """What created the object each save writes into (`created_by` of its file argument), once for
        every load that asks (each asked about every save of the file)."""
        if self._saved_into is None:
            self._saved_into = [created_by(self.names, self.flows.calls(), target)
                                for other in self.saves() if (target := _argument(other, 1, "f")) is not None]
        return self._saved_into

    def _saves_by_function(self) -> dict[int, list[cst.Call]]:
        """id(enclosing function) -> the saves written in it (each load asks for its own function's)."""
        if self._saves_in is None:
            self._saves_in = {}
            for other in self.saves():
                self._saves_in.setdefault(id(self.flows.enclosing_function(other)), []).append(other)
        return self._saves_in

    def written_from_host(self, call: cst.Call) -> bool:
        """The file this loads is one the file itself writes from host memory (`torch.save(feats.cpu(),
        os.path.join(out, "feats.pth"))` ... `torch.load(os.path.join(cache, "feats.pth"))`: the same file
        name): its tensors were saved from the CPU and load back there."""
        source = _first_argument(call)
        file_names = _file_names(source) if source is not None else set()
        if not file_names:
            return False
        for other in self.saves():
            saved, target = _argument(other, 0, "obj"), _argument(other, 1, "f")
            if saved is not None and target is not None and file_names & _file_names(target) \
                    and self.values.value_of(saved).host:
                return True
        return False

    def saves(self) -> list[cst.Call]:
        if self._saves_found is None:  # asked for every load: one pass over the file's calls, not one each
            self._saves_found = [other for other in self.flows.calls() if _may_save(other.func)
                                 and self.names.qualify(other.func) in SAVES]
        return self._saves_found

    def located_sibling(self, call: cst.Call, located: list[cst.Call]) -> bool:
        """`torch.load(p)` next to `torch.load(p, map_location="cpu")` (one of `located`, the file's loads with
        a `map_location`) in the same function (a device check's two branches): the author chose where each loads."""
        if self._located_loads is None:  # (id(function), source text) -> its loads with a map_location, once per file
            self._located_loads = {}
            for other in located:
                for place in self.load_places(other):
                    self._located_loads.setdefault(place, []).append(other)
        return any(other is not call for place in self.load_places(call) for other in self._located_loads.get(place, []))

    def load_places(self, call: cst.Call) -> set[tuple[int, str]]:
        """(function, path text) where a load reads its file: its own function, and where the load sits in a
        helper of the file reading a parameter (`def read(path): return torch.load(path)`), each caller's
        function with what it passes."""
        source = _first_argument(call)
        if source is None:
            return set()
        function = self.flows.enclosing_function(call)
        places = {(id(function), code_of(source, 200))}
        bindings = self.names.reaching(source) if type(source) is cst.Name else []
        if function is not None and len(bindings) == 1 and bindings[0].kind == "param" and bindings[0].scope.node is function:
            for caller in self.names.calls_running(function, self.flows.calls()):
                passed = passed_argument(function, caller, source.value)
                if passed is not None:
                    places.add((id(self.flows.enclosing_function(caller)), code_of(passed, 200)))
        return places


def _may_save(func: cst.BaseExpression) -> bool:
    return type(func) is cst.Name or type(func) is cst.Attribute and func.attr.value in _SAVE_ATTRIBUTES  # type: ignore[attr-defined]


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
        if type(node) is cst.SimpleString:
            name = node.evaluated_value
            name = name.rsplit("/", 1)[-1] if isinstance(name, str) else ""
            if "." in name.strip(".") and "{" not in name:
                found.add(name)
        stack.extend(children(node))
    return found
