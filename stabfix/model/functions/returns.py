"""The returns half of the function summaries: what each function of the file returns, element by element
(`ReturnFacts`: `returns`, `return_depth`), built on demand with its own fixpoint (`fixpoint.py`).
Reads `values`, `history` and `activations`; never the effects half, nor the parameters whose gradient
a function never reads (`grad_unread.py`, which reads this half). Asked through `summaries.py`
(`Summaries.returned_facts`, `facts`, `returned_to`, `FunctionSummary.returns`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.activations import Activations
from stabfix.model.calls.schedulers import LR_SCHEDULER, is_lr_scheduler
from stabfix.model.flow.gradient_use import is_requires_grad_call, requires_grad_keyword
from stabfix.model.flow.history import LOSS, MODEL_OUTPUT, History
from stabfix.model.flow.host_tensors import is_host_built
from stabfix.model.flow.values import DATA_LOADERS, Values
from stabfix.model.functions.fixpoint import MAX_DEPTH, Fixpoint, Frame
from stabfix.model.functions.summary_facts import CallSummaries, ClassSummary, FunctionSummary, ReturnFacts, ValueFacts
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.names import Names
from stabfix.model.source.scopes import first_parameter
from stabfix.model.source.node_fields import children


class ReturnSummaries:
    def __init__(self, summaries: CallSummaries, imports: ImportTracker, names: Names, values: Values,
                 history: History, activations: Activations) -> None:
        self.summaries = summaries
        self.imports = imports
        self.names = names
        self.values = values
        self.history = history
        self.activations = activations
        self.fixpoint: Fixpoint[ReturnFacts] = Fixpoint(self._build, ReturnFacts())

    def of(self, function: cst.FunctionDef) -> ReturnFacts:
        return self.fixpoint.of(function)

    # -- queries -----------------------------------------------------------------------------------
    def returned_facts(self, call: cst.Call) -> Optional[tuple[ValueFacts, ...]]:
        """What a call returns, element by element, when its summary is known and within the depth limit."""
        summary = self.summaries.function_of_call(call)
        if summary is None:
            return None
        returned = summary.return_facts()
        if not returned.returns or returned.return_depth >= MAX_DEPTH:
            return None
        stack = self.fixpoint.stack
        recursive = any(frame.function is self.names.definition_of(call) for frame in stack)
        if stack and not recursive:  # a call back into the cycle adds no level: the fixpoint settles
            stack[-1].depth = max(stack[-1].depth, returned.return_depth + 1)
        return tuple(self._as_passed(call, summary, fact) for fact in returned.returns)

    def _as_passed(self, call: cst.Call, summary: FunctionSummary, fact: ValueFacts) -> ValueFacts:
        """A returned element as the caller sees it: a callee's parameter handed back is the caller's
        argument, which is a parameter of the caller only when `_parameter_of` shows it."""
        if fact.parameter is None:
            return fact
        arg = next((a for a in call.args if parameter_receiving(summary, call, a) == fact.parameter), None)
        return replace(fact, parameter=self._parameter_of(arg.value) if arg is not None else None)

    def facts(self, expr: cst.BaseExpression) -> ValueFacts:
        return self._facts(expr, 0)

    def returned_to(self, name: cst.Name) -> Optional[ValueFacts]:
        return self._through_unpacking(name, 0) or self._loader_element(name)

    def activation_of_call(self, call: cst.Call) -> Optional[str]:
        if not self.summaries.summarised(call):
            return None
        returned = self.returned_facts(call)
        return returned[0].activation if returned and len(returned) == 1 else None

    # -- building one function's returns -----------------------------------------------------------
    def _build(self, function: cst.FunctionDef, frame: Frame) -> ReturnFacts:
        shapes = [shape for value in self.names.returns.get(function, []) if (shape := self._shape(value, 0)) is not None]
        lengths = sorted({len(shape) for shape in shapes})
        if len(lengths) == 1:
            return ReturnFacts(_joined(shapes), frame.depth)
        by_length = tuple(_joined([shape for shape in shapes if len(shape) == n]) for n in lengths)
        return ReturnFacts((ValueFacts(),) if shapes else (), frame.depth, by_length=by_length)

    def _shape(self, expr: cst.BaseExpression, depth: int) -> Optional[tuple[ValueFacts, ...]]:
        """A returned value, element by element; None when it adds nothing (a recursive call not yet known)."""
        if type(expr) is cst.Tuple and not any(type(e) is cst.StarredElement for e in expr.elements):
            return tuple(self._facts(element.value, depth) for element in expr.elements)
        if type(expr) is cst.Call and self.summaries.summarised(expr):
            return self.returned_facts(expr)
        bound = self.summaries.single_value(expr)
        if bound is not None and depth < MAX_DEPTH and type(bound) in (cst.Tuple, cst.Call):
            return self._shape(bound, depth + 1)
        return (self._facts(expr, depth),)

    def _facts(self, expr: cst.BaseExpression, depth: int) -> ValueFacts:
        if depth > MAX_DEPTH:
            return ValueFacts()
        if type(expr) is cst.Call and self.summaries.summarised(expr):
            returned = self.returned_facts(expr)
            return returned[0] if returned and len(returned) == 1 else ValueFacts()
        if type(expr) is cst.Name:
            followed = self._through_unpacking(expr, depth)
            if followed is not None:
                return followed
        return self._local_facts(expr)

    def _through_unpacking(self, name: cst.Name, depth: int) -> Optional[ValueFacts]:
        """`x, y = prepare(batch)` (or `pair = prepare(batch); x, y = pair`): an element of a call's summary;
        `y = prepare_target(batch)`: its one value. Every binding reaching the use must show one."""
        bindings = self.names.reaching(name)
        found = []
        for binding in bindings:
            source = binding.value
            while type(source) is cst.Name and depth < MAX_DEPTH:
                source, depth = self.summaries.single_value(source), depth + 1
            if type(source) is not cst.Call or not self.summaries.summarised(source):
                return None
            returned = self.returned_facts(source)
            if binding.kind == "unpack" and len(binding.position) == 1 and returned and binding.position[0] < len(returned):
                found.append(returned[binding.position[0]])
            elif binding.kind == "assign" and returned and len(returned) == 1:
                found.append(returned[0])
            else:
                return None
        return ValueFacts.join(found) if found else None

    def _loader_element(self, name: cst.Name) -> Optional[ValueFacts]:
        """`for x, y in loader` (or `enumerate(loader)`) over a `DataLoader` of a dataset class of the project:
        the element its `__getitem__` returns at that position (the default collation stacks each element
        and keeps whether it requires grad). Every binding reaching the use must show one."""
        found = []
        for binding in self.names.reaching(name):
            if binding.kind != "for" or binding.value is None:
                return None
            iterable, position = binding.value, binding.position
            if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "enumerate" \
                    and iterable.args:
                if len(position) != 2 or position[0] != 1:
                    return None
                iterable, position = iterable.args[0].value, position[1:]
            width = _unpacked_width(binding.node, len(binding.position) - len(position))
            element = self._dataset_item(iterable, width) if width is not None else None
            if element is None or len(position) != 1 or not 0 <= position[0] < len(element):
                return None
            found.append(element[position[0]])
        return ValueFacts.join(found) if found else None

    def _dataset_item(self, loader: cst.BaseExpression, width: int) -> Optional[tuple[ValueFacts, ...]]:
        """What one item of the dataset a `DataLoader` with the default collation is built over returns, as a
        loop unpacking `width` names receives it."""
        if type(loader) is cst.Name:
            loader = self.summaries.single_value(loader)  # type: ignore[assignment]
        if type(loader) is not cst.Call or (self.names.qualify(loader.func) or "") not in DATA_LOADERS:
            return None
        if any(a.keyword is not None and a.keyword.value == "collate_fn" for a in loader.args):
            return None
        dataset = next((a.value for a in loader.args if a.keyword is None or a.keyword.value == "dataset"), None)
        if type(dataset) is cst.Name:
            if self._dataset_reached_otherwise(dataset):
                return None
            dataset = self.summaries.single_value(dataset)
        if type(dataset) is not cst.Call or any(a.star for a in loader.args):
            return None
        built = self.summaries.of_call(dataset)
        getitem = built.method("__getitem__") if isinstance(built, ClassSummary) else None
        if getitem is None:
            return None
        returned = getitem.return_facts()
        if returned.return_depth >= MAX_DEPTH:
            return None
        # one returned value (a tensor, a dict) unpacked by the loop gives its rows, not elements
        shapes = [shape for shape in (returned.returns, *returned.by_length) if len(shape) == width and width > 1]
        return shapes[0] if shapes else None

    def _dataset_reached_otherwise(self, dataset: cst.Name) -> bool:
        """The dataset object is used other than by loaders in its scope (`Adam([data.ys])`, `split(data)`):
        what it holds may be learned or read there. Unknown when its scope is not shown."""
        bindings = self.names.reaching(dataset)
        if len(bindings) != 1 or bindings[0].scope is None:
            return True
        for node in _descendants(bindings[0].scope.node):
            if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == dataset.value:
                return True
            if type(node) is cst.Call and any(type(a.value) is cst.Name and a.value.value == dataset.value
                                                  for a in node.args):
                callee = self.names.qualify(node.func) or ""
                if callee not in DATA_LOADERS and not (type(node.func) is cst.Name and node.func.value == "len"):
                    return True
        return False

    def _local_facts(self, expr: cst.BaseExpression) -> ValueFacts:
        value = self.values.value_of(expr)
        origin = self.history.origin(expr)
        activation = self.activations.of(expr)
        made = self._made_to_require_grad(expr)
        requires_grad = True if made or origin is not None else (False if value.detached or value.not_tensor else None)
        history = True if origin is not None else (False if made or value.detached else None)
        device = "accelerator" if value.placed else "host" if value.host else None
        role = ("loss" if origin == LOSS else "model_output" if value.model_output or origin == MODEL_OUTPUT
                else "batch" if value.batch else self._object_role(expr) if not value.tensor else None)
        host_built = True if is_host_built(expr, self.names, self.values, self.returned_facts) else None
        return ValueFacts(requires_grad, history, True if value.detached else None, device,
                          activation.kind if activation is not None else None, role, self._parameter_of(expr), host_built)

    def _object_role(self, expr: cst.BaseExpression) -> Optional[str]:
        """What a returned object that is not a tensor is for: a learning-rate scheduler (`schedulers`)."""
        optimizers = self.values.optimizers
        return (LR_SCHEDULER if optimizers is not None and is_lr_scheduler(expr, self.names, optimizers, self.summaries)
                else None)

    def _parameter_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """The parameter `expr` is, through operations that keep requires-grad (`y.view(n, -1).float()`)."""
        operand = torch_ops.grad_operand(expr, self.imports.qualify)
        if type(operand) is not cst.Name:
            return None
        reaching = self.names.reaching(operand)
        return operand.value if reaching and all(b.kind == "param" for b in reaching) else None

    def _made_to_require_grad(self, expr: cst.BaseExpression) -> bool:
        candidates = [expr]
        if type(expr) is cst.Name:
            candidates = [b.bound_value for b in self.names.reaching(expr)]
            if not candidates or any(c is None for c in candidates):
                return False
        # through operations that keep the flag: `torch.tensor(y, requires_grad=True).to(device).view(-1)`
        marked = [torch_ops.grad_operand(c, self.imports.qualify) for c in candidates]  # type: ignore[arg-type]
        return all(self._marks(c) or self._marked_attribute(c) for c in marked)

    def _marks(self, expr: Optional[cst.BaseExpression]) -> bool:
        return expr is not None and (is_requires_grad_call(expr) or requires_grad_keyword(expr, self.imports) is not None)

    def _marked_attribute(self, expr: Optional[cst.BaseExpression]) -> bool:
        """`self.y[idx]` in a method where every binding of the instance's `y` makes it require grad
        (`self.y = torch.tensor(y, requires_grad=True)` in `__init__`)."""
        if not (type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value in self.names.uses):
            return False
        bindings = self.names.bindings_of(expr.value)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].scope is None:
            return False
        method, owner = bindings[0].scope.node, self.names.enclosing_class(bindings[0].scope)
        if owner is None or type(method) is not cst.FunctionDef or first_parameter(method) != expr.value.value:
            return False
        if method.name.value != "__getitem__":  # an item of a dataset is data; elsewhere it may be learned state
            return False
        if _read_outside(owner, expr.attr.value, method):
            return False
        values = [b.bound_value for b in self.names.attribute_bindings(owner, expr.attr.value)]
        return bool(values) and all(self._marks(torch_ops.grad_operand(v, self.imports.qualify)) if v is not None else False
                                    for v in values)


def parameter_receiving(summary: FunctionSummary, call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The positional parameter of `summary` that `arg` of `call` binds (a method's receiver left out)."""
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in summary.parameters else None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: positional.index(arg) + 1]):
        return None
    index = positional.index(arg)
    return summary.parameters[index] if index < len(summary.parameters) else None


def _joined(shapes: list[tuple[ValueFacts, ...]]) -> tuple[ValueFacts, ...]:
    """Returns of one length, element by element: what every one of them agrees on."""
    return tuple(ValueFacts.join([shape[i] for shape in shapes]) for i in range(len(shapes[0]))) if shapes else ()


def _descendants(node: cst.CSTNode, skip: Optional[cst.CSTNode] = None) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), leaving out the subtree of `skip`."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current is skip:
            continue
        yield current
        stack.extend(children(current))


def _read_outside(owner: cst.ClassDef, attribute: str, method: cst.FunctionDef) -> bool:
    """The class reads its attribute `attribute` somewhere other than in `method`: stores, and reads of
    its size only (`len(self.ys)`, `self.ys.shape`, `self.ys.size(0)`), aside."""
    sized: set[int] = set()
    stored: set[int] = set()
    for node in _descendants(owner, skip=method):
        if type(node) in (cst.Assign, cst.AnnAssign):
            targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
            stored.update(id(t) for t in targets)
        elif type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "len":
            sized.update(id(a.value) for a in node.args)
        elif type(node) is cst.Attribute and node.attr.value in _SIZE_READS:
            sized.add(id(node.value))
        elif type(node) is cst.Attribute and node.attr.value == attribute and id(node) not in stored | sized:
            return True
    return False


_SIZE_READS = frozenset({"shape", "size", "ndim", "dtype", "device"})


def _unpacked_width(loop: cst.CSTNode, depth: int) -> Optional[int]:
    """How many names the loop's target unpacks each item into, `depth` levels into its target
    (`for i, (x, y) in enumerate(loader)`: 2 at depth 1)."""
    target = loop.target if type(loop) is cst.For else None
    for _ in range(depth):
        if type(target) not in (cst.Tuple, cst.List) or len(target.elements) < 2:
            return None
        target = target.elements[1].value
    if type(target) not in (cst.Tuple, cst.List) or any(type(e) is cst.StarredElement for e in target.elements):
        return None
    return len(target.elements)
