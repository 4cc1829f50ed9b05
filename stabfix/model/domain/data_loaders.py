"""The data pipeline of a training file: the loaders it builds, their samplers, and the loops drawing from them.

Built on `names` and `flows`; the model's `distributed` part holds one as `pipeline` (asked by the distributed
rules and by SF206):

- `loaders()`: each `DataLoader(...)` with its holder (the name or attribute it is assigned to, also through a
  tuple assignment or a wrapping call such as `fabric.setup_dataloaders(DataLoader(...))`), dataset, sampler, shuffle.
- `sampler_kind(expr)`: "distributed", "plain" (a single-process torch sampler) or "unknown".
- `holders(loader)`, `returned_by(call)`: where the callers of a same-file function returning a loader keep it.
- `loops_over(holder)`, `enclosing_loop(node)`: the loops drawing from a held loader.
- `argument(call, position, keyword)`: a call's argument by keyword or position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import CLASSES_AND_FUNCTIONS, NAMES_AND_ATTRIBUTES, code_of
from stabfix.model.source.node_fields import code_children


LOADER_CLASSES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DISTRIBUTED_SAMPLERS = frozenset({"torch.utils.data.DistributedSampler",
                                  "torch.utils.data.distributed.DistributedSampler"})
PLAIN_SAMPLERS = frozenset(f"torch.utils.data{module}.{name}" for module in ("", ".sampler")
                           for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler", "SubsetRandomSampler"))


@dataclass(frozen=True)
class Loader:
    """One `DataLoader(...)` construction: where it is held and what it draws with."""

    call: cst.Call
    holder: Optional[str]  # source text of the name or attribute it is assigned to
    dataset: Optional[cst.BaseExpression]
    sampler: Optional[cst.BaseExpression]  # `sampler=` or `batch_sampler=` (None when absent or `None`)
    shuffle: Optional[cst.BaseExpression]


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position] if 0 <= position < len(positional) else None


class DataPipeline:
    """Which loaders the file builds with which samplers, and the loops that draw from them (asked by the
    distributed rules over `Distributed`'s names and flows)."""

    def __init__(self, names: Names, flows: ValueFlows) -> None:
        self.names, self.flows = names, flows
        self._loops: Optional[list[cst.For]] = None

    def holder(self, call: cst.Call, through_wrapper: bool = False) -> Optional[str]:
        """The name or attribute the call's result is assigned to; `through_wrapper`: also as the first argument
        of a call that returns it wrapped (`loader = fabric.setup_dataloaders(DataLoader(...))`)."""
        parent = self.flows.parent(call)
        if through_wrapper and type(parent) is cst.Arg and parent.keyword is None \
                and type(wrapper := self.flows.parent(parent)) is cst.Call and wrapper.args[0] is parent:
            parent = self.flows.parent(wrapper)
        if type(parent) is cst.Element and type(display := self.flows.parent(parent)) is cst.Tuple \
                and type(statement := self.flows.parent(display)) is cst.Assign and len(statement.targets) == 1 \
                and type(targets := statement.targets[0].target) is cst.Tuple \
                and len(targets.elements) == len(display.elements) and not any(type(e) is cst.StarredElement for e in display.elements):
            return code_of(targets.elements[display.elements.index(parent)].value, 200)  # `dev, loader = d, DataLoader(...)`
        if type(parent) is cst.Assign and len(parent.targets) == 1:
            return code_of(parent.targets[0].target, 200)
        if type(parent) in (cst.AnnAssign, cst.NamedExpr):
            return code_of(parent.target, 200)
        return None

    def holders(self, loader: Loader) -> list[str]:
        """Where the loader is held: its own holder, and what each caller of a same-file function returning it
        holds of the result (`loader = make_loader()`, `train_dl, val_dl = make_loaders()`)."""
        holders = [loader.holder] if loader.holder is not None else []
        factory, element = self.returned_by(loader.call)
        for call in self.flows.calls() if factory is not None else ():
            parent = self.flows.parent(call)
            if (self.names.definition_of(call) or method_of_instance(self.names, call)) is not factory \
                    or type(parent) is not cst.Assign:  # `make_loaders(...)`, `Builder().loaders(...)`
                continue
            target = parent.targets[0].target
            if element is None:
                holders.append(code_of(target, 200))
            elif type(target) is cst.Tuple and element < len(target.elements):
                holders.append(code_of(target.elements[element].value, 200))
        return holders

    def returned_by(self, call: cst.Call) -> tuple[Optional[cst.FunctionDef], Optional[int]]:
        """The function whose `return` hands back the call's value, directly or through the name holding it, and
        its place in a returned tuple (None: the whole value)."""
        function, holder = self.flows.enclosing_function(call), self.holder(call)
        stack: list[cst.CSTNode] = [function.body] if function is not None else []
        while stack:
            item = stack.pop()
            stack.extend(child for child in code_children(item) if type(child) not in CLASSES_AND_FUNCTIONS)
            if type(item) is not cst.Return or item.value is None:
                continue
            values = [e.value for e in item.value.elements] if type(item.value) is cst.Tuple else [item.value]
            for position, value in enumerate(values):
                if value is call or (holder is not None and code_of(value, 200) == holder):
                    return function, (position if type(item.value) is cst.Tuple else None)
        return None, None

    def loaders(self) -> list[Loader]:
        found = []
        for call in self.flows.calls():
            if self.names.qualify(call.func) in LOADER_CLASSES:
                sampler = argument(call, 3, "sampler") or argument(call, 4, "batch_sampler")
                if type(sampler) is cst.Name and sampler.value == "None":
                    sampler = None
                found.append(Loader(call, self.holder(call, through_wrapper=True), argument(call, 0, "dataset"), sampler,
                                    argument(call, 2, "shuffle")))
        return found

    def sampler_kind(self, sampler: cst.BaseExpression, depth: int = 0) -> str:
        """"distributed", "plain" (a single-process torch sampler) or "unknown" (a project's own, a helper's)."""
        if type(sampler) is cst.Call:
            qualified = self.names.qualify(sampler.func) or ""
            if qualified in DISTRIBUTED_SAMPLERS:
                return "distributed"
            if qualified in PLAIN_SAMPLERS:
                return "plain"
            if qualified.endswith("BatchSampler") and sampler.args:  # BatchSampler(inner, ...)
                return self.sampler_kind(sampler.args[0].value, depth + 1)
            return "unknown"
        if type(sampler) is cst.Name and sampler in self.names.uses and depth < 4:
            values = [b.bound_value for b in self.names.bindings_of(sampler)]
            kinds = {self.sampler_kind(v, depth + 1) for v in values if v is not None}
            return kinds.pop() if len(kinds) == 1 else "unknown"
        return "unknown"

    def loops_over(self, holder: str) -> list[cst.For]:
        """The `for` loops whose iterable is the held loader (`loader`, `enumerate(loader)`, `tqdm(self.loader)`)."""
        if self._loops is None:  # the file's `for` loops, found once: rules ask this per loader and per call
            self._loops = []
            stack: list[cst.CSTNode] = [self.flows.module] if self.flows.module is not None else []
            while stack:
                node = stack.pop()
                if type(node) is cst.For:
                    self._loops.append(node)
                stack.extend(code_children(node))
        return [loop for loop in self._loops if _contains_text(loop.iter, holder)]

    def enclosing_loop(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        current = self.flows.parent(node)
        while current is not None and type(current) not in CLASSES_AND_FUNCTIONS:
            if type(current) in (cst.For, cst.While):
                return current
            current = self.flows.parent(current)
        return None


def _contains_text(expr: cst.CSTNode, text: str) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) in NAMES_AND_ATTRIBUTES and code_of(node, 200) == text:
            return True
        stack.extend(code_children(node))
    return False


def drawn_names(loop: cst.For) -> set[str]:
    """The loop's targets and the names bound from them in its body (`x, y = batch`, `{k: v for k, v in batch.items()}`)."""
    drawn = {node.value for node in own_nodes(loop.target) if type(node) is cst.Name}
    for _ in range(2):  # chains: `inputs = batch["x"]` then `for k, v in inputs.items()`
        for node in own_nodes(loop.body):
            kind = type(node)
            if kind is cst.CompFor and root_name(node.iter) in drawn:
                drawn |= {name.value for name in own_nodes(node.target) if type(name) is cst.Name}
            elif kind is cst.Assign and root_name(node.value) in drawn:
                drawn |= {name.value for t in node.targets for name in own_nodes(t.target) if type(name) is cst.Name}
    return drawn


def root_name(expr: cst.BaseExpression) -> Optional[str]:
    while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
        expr = expr.value if type(expr) is not cst.Call else expr.func
    return expr.value if type(expr) is cst.Name else None


_NOT_OWN = frozenset({cst.FunctionDef, cst.ClassDef})


def own_nodes(node: cst.CSTNode):
    """The node and the nodes under it, without trivia and without nested functions' and classes' bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        # exact types (libcst has no subclass of them): an ABC isinstance per node costs more; no caller reads trivia
        stack.extend(child for child in code_children(current) if type(child) not in _NOT_OWN)
