"""Autograd history: which expressions still carry a graph, and what a graph is later used for.

The model's `history` part, queried after the traversal; it reads `names`, `values`, `losses` and
`events`. It answers:

- `origin(expr)`: "a loss" or "a model output" when the code shows that the expression still
  carries autograd history (a loss call, a forward pass, or arithmetic, reductions, casts, moves
  and indexing of one), or None when it is cut or not shown: `.item()`, `.detach()`, `.data`,
  `float(...)`, `.tolist()`, integer results (`argmax`, comparisons), values bound or read under
  `no_grad`/`inference_mode` (a block or a decorator), `torch.tensor(...)` copies.
- `feeds_backward(spellings, function)` (`flow/graph_uses.py`): whether a backward pass (`x.backward()`,
  `accelerator.backward(x)`, `torch.autograd.grad(x, ...)`) differentiates something computed
  from one of the spellings (`total`, `self.aux_losses`), following names through their bindings.
- `feeds_return(spellings, function)`: the same for what a function returns (the caller decides
  what happens to it: a `compute_loss` that sums micro-batch losses returns the loss it backpropagates).
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.events import Backward, Events
from stabfix.model.calls.losses import LossIndex
from stabfix.model.flow.graph_uses import CUT_BUILTINS, GraphUses, reads
from stabfix.model.flow.values import Values
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.instances import held_class
from stabfix.model.source.names import Names
from stabfix.model.source.scopes import instance_receiver
from stabfix.model.source.node_fields import code_nodes, visit_readonly

LOSS, MODEL_OUTPUT = "a loss", "a model output"
# Which tensor methods, attributes and torch functions drop the history (Python data, integer or boolean
# tensors, a cut copy, metadata) is the torch-operation table's (`torch_ops`); a gradient has none either.
# Namespaces whose functions return host data or gradients (`torch.autograd.grad` without `create_graph`).
CUT_NAMESPACES = ("numpy.", "np.", "math.", "statistics.", "torch.autograd.")
# Framework hooks whose return value the framework backpropagates (Lightning, Hugging Face `Trainer`).
FRAMEWORK_LOSS_STEPS = frozenset({"training_step", "compute_loss"})
# Fresh tensors built from values (a copy without history) or from a shape.
FRESH_TENSOR_FUNCTIONS = frozenset(
    {"torch.tensor", "torch.as_tensor", "torch.zeros_like", "torch.ones_like", "torch.empty_like",
     "torch.no_grad", "numpy.array", "numpy.asarray"}
)


class History:
    def __init__(self, names: Names, values: Values, losses: LossIndex, events: Events) -> None:
        self.names = names
        self.values = values
        self.losses = losses
        self.events = events
        self._memo: dict[int, Optional[str]] = {}
        self._evidence: Optional[dict[int, str]] = None  # binding id -> origin, from how the name is used
        self._marked: set[cst.FunctionDef] = set()
        self._switches_to_eval: dict[int, bool] = {}  # id(function) -> `switches_to_eval`, asked inside it
        self._evaluating: Optional[tuple[int, set[int]]] = None  # (calls read, ids of functions around an `.eval()`)
        self.uses = GraphUses(names, events)  # what a graph is used for: a backward pass or a return

    def mark_returned(self, function: cst.FunctionDef) -> None:
        """What a framework's training step returns is the loss the framework backpropagates (Lightning's
        `training_step`, a Hugging Face `Trainer.compute_loss`): the names it reads carry history."""
        if function in self._marked or function.name.value not in FRAMEWORK_LOSS_STEPS:
            return
        self._marked.add(function)
        evidence = self._uses_as_evidence()
        for returned in self.names.returns.get(function, []):
            for name in _names_outside_tests(returned, calls=False):
                for binding in self.names.reaching(name):
                    evidence.setdefault(id(binding), LOSS)
        self._memo.clear()

    def _uses_as_evidence(self) -> dict[int, str]:
        """Bindings whose later use proves they carry history: differentiated by a backward pass, or the
        prediction of a loss."""
        if self._evidence is None:
            self._evidence = {}
            for event in self.events.of_kind("backward"):
                if isinstance(event, Backward) and event.loss is not None:
                    for name in _names_outside_tests(event.loss):
                        for binding in self.names.reaching(name):
                            self._evidence.setdefault(id(binding), LOSS)
            for _site, operands in self.losses.loss_sites():
                prediction = getattr(operands, "prediction", None)
                if type(prediction) is cst.Name:
                    for binding in self.names.reaching(prediction):
                        self._evidence.setdefault(id(binding), MODEL_OUTPUT)
        return self._evidence

    # -- what carries a graph --------------------------------------------------------------------------
    def origin(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # `x = x + f(x)` in a loop refers to itself
        found = self._origin(expr, depth) if depth < 10 else None
        self._memo[key] = found
        return found

    def _origin(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        if type(expr) is cst.Name:
            return self._name_origin(expr, depth)
        if type(expr) is cst.Attribute:
            op = torch_ops.attribute(expr.attr.value)
            if expr.attr.value == "grad" or (op is not None and not op.history):
                return None
            if type(expr.value) is cst.Name and expr.value.value == "self":
                return None  # state on self: not shown here
            return self.origin(expr.value, depth + 1)  # `outputs.loss`
        if type(expr) is cst.Subscript:
            return self.origin(expr.value, depth + 1)  # `out[0]`, `outputs["loss"]`
        if type(expr) is cst.BinaryOperation:
            return self.origin(expr.left, depth + 1) or self.origin(expr.right, depth + 1)
        if type(expr) is cst.UnaryOperation:
            return None if type(expr.operator) is cst.Not else self.origin(expr.expression, depth + 1)
        if type(expr) is cst.IfExp:
            return self.origin(expr.body, depth + 1) or self.origin(expr.orelse, depth + 1)
        if type(expr) in (cst.Tuple, cst.List):
            for element in expr.elements:
                found = self.origin(element.value, depth + 1)
                if found:
                    return found
            return None
        if type(expr) is cst.Call:
            return self._call_origin(expr, depth)
        if type(expr) in (cst.ListComp, cst.GeneratorExp):
            return self.origin(expr.elt, depth + 1)  # `[p.float() for p in parts]` holds what `p.float()` is
        return None  # literals, comparisons, dict and set comprehensions, lambdas

    def _name_origin(self, name: cst.Name, depth: int) -> Optional[str]:
        use = self.names.uses.get(name)
        if use is None or use.grad_off:
            return None
        evidence = self._uses_as_evidence()
        bindings = self.names.reaching(name)
        if not bindings and type(use.scope.node) in (cst.ListComp, cst.GeneratorExp):
            bindings = use.scope.bindings.get(name.value, [])  # a comprehension's target, read before its `for`
        for binding in bindings:
            if binding.grad_off:
                continue
            if id(binding) in evidence and binding.kind not in ("param", "for"):
                return evidence[id(binding)]
            value = binding.bound_value
            if binding.kind == "for" and binding.value is not None and type(binding.node) is cst.CompFor:
                value = torch_ops.element_source(binding.value, binding.position)  # an element of what it draws from
            if value is None and binding.kind == "unpack" and type(binding.value) is cst.Call:
                value = binding.value  # `logits, loss = model(x)`: a part of a forward's result
                if binding.position and self._cut_position(binding.value, binding.position):
                    continue
                if self.losses.resolve(binding.value) is not None:
                    continue  # `loss, pred = self.compute_loss(...)`: which part is the loss is not shown
            if value is None:
                continue
            found = self.origin(value, depth + 1)
            if found:
                return found
        return None

    def _cut_position(self, call: cst.Call, position: tuple[int, ...]) -> bool:
        """`_, pred = out.max(1)`: the indices of a max/min/topk/sort carry no history."""
        func = call.func
        return type(func) is cst.Attribute and func.attr.value in ("max", "min", "topk", "sort") and position[0] == 1

    def _call_origin(self, call: cst.Call, depth: int) -> Optional[str]:
        func = call.func
        root = func
        while type(root) in (cst.Attribute, cst.Call):
            root = root.value if type(root) is cst.Attribute else root.func
        use = self.names.uses.get(root) if type(root) is cst.Name else None
        if use is not None and use.grad_off:
            return None  # computed where autograd is off
        qualified = self.names.qualify(func) or ""
        if qualified in FRESH_TENSOR_FUNCTIONS or qualified.startswith(CUT_NAMESPACES):
            return None
        op = torch_ops.function(qualified) if qualified else None
        if op is not None and not op.history:
            return None
        if type(func) is cst.Name and func.value in CUT_BUILTINS and not qualified:
            return None
        if type(func) is cst.Attribute and not qualified:
            op = torch_ops.method(func.attr.value, call)
            if func.attr.value == "backward" or (op is not None and not op.history):
                return None
        if self.losses.resolve(call) is not None:
            return None if self._of_constants(call) else LOSS
        if type(func) is cst.Attribute and not qualified.startswith("torch."):
            receiver = self.origin(func.value, depth + 1)
            if receiver:
                return receiver  # `loss.mean()`, `out.float()`, `out.cpu()`, `logits.softmax(-1)`
        if qualified.startswith("torch.") and not qualified.startswith("torch.nn.") or qualified.startswith(
            "torch.nn.functional."
        ):
            for arg in call.args:
                found = self.origin(arg.value, depth + 1)
                if found:
                    return found  # `torch.stack(...)`, `F.softmax(out)` of a graph
            return None
        if qualified:
            return None  # a library function (a metric, a logger), a module or parameter constructor
        modules = self.values.modules
        forward = func.value if type(func) is cst.Attribute and func.attr.value == "forward" else func
        if modules is not None and modules.is_module(forward):
            return MODEL_OUTPUT  # `model(x)`, `self.encoder(x)`, `model.forward(x)` of a module of the file
        if modules is not None and type(func) is cst.Attribute and modules.is_module(func.value) \
                and self._module_method_computes(func.attr.value):
            return MODEL_OUTPUT  # `model.neg_log_likelihood(x)`: a method of the file's module class
        return None

    def _module_method_computes(self, method: str) -> bool:
        """The one method of that name in the file's `torch.nn` module classes returns a tensor it computes
        from the module's own state (`self.means`, `self.encoder(x)`): called on a module, it carries its graph."""
        found = [f for f in self.names.returns if f.name.value == method and self._in_module_class(f)]
        if len(found) != 1:
            return False
        returned, receiver = self.names.returns[found[0]], instance_receiver(found[0])
        return bool(returned) and bool(receiver) and all(
            not self.values.value_of(value).not_tensor and self._reads_receiver(value, receiver, 0) for value in returned)

    def _in_module_class(self, function: cst.FunctionDef) -> bool:
        owner = self.names.enclosing_class(self.names.scopes[function]) if function in self.names.scopes else None
        return type(owner) is cst.ClassDef and any(
            (self.names.qualify(base.value) or "").startswith("torch.nn.") for base in owner.bases)

    def _reads_receiver(self, expr: cst.BaseExpression, receiver: str, depth: int) -> bool:
        """`expr` reads the instance's state (`self.<attr>`, whatever the receiver is called), directly or
        through the names it reads."""
        if depth > 3:
            return False
        for read in reads(expr):
            if type(read) is cst.Attribute and _root_name(read) == receiver:
                return True
            if type(read) is cst.Name and read in self.names.uses and any(
                    b.bound_value is not None and self._reads_receiver(b.bound_value, receiver, depth + 1)
                    for b in self.names.reaching(read)):
                return True
        return False

    def _of_constants(self, call: cst.Call) -> bool:
        """A loss computed only from constant tensors (factories, data, no `requires_grad`) and plain
        values: a unit test of a loss function, which records no graph."""
        values = [self.values.value_of(arg.value) for arg in call.args if not arg.star]
        return bool(values) and any(v.constant for v in values) and all(v.constant or v.not_tensor for v in values)

    def read_under_no_grad(self, expr: cst.BaseExpression) -> bool:
        """Some variable of the expression is read where autograd is off (a `no_grad` block or decorator)."""
        return any(self.names.uses[node].grad_off for node in _names_outside_tests(expr) if node in self.names.uses)

    def trains_or_evaluates(self, function: Optional[cst.FunctionDef], loop: Optional[cst.CSTNode]) -> bool:
        """The function backpropagates on its own (what it keeps is a log), or the loop draws batches from a
        data source (`for x, y in val_loader`: an evaluation loop): not a forward that assembles outputs."""
        return bool(self.events.in_function(function, "backward")) or self.draws_batches([loop])

    def draws_batches(self, loops: Iterable[Optional[cst.CSTNode]]) -> bool:
        """One of the loops iterates a data source (`for x, y in val_loader`, `for batch in stream` with
        `stream = DataLoader(...)`): by what the iterable holds, its name only where the code does not show it."""
        return any(type(loop) is cst.For and self._is_data_source(loop.iter) for loop in loops)

    def _is_data_source(self, iterable: cst.BaseExpression, depth: int = 0) -> bool:
        """A `DataLoader`/`Dataset` (torch's, Hugging Face `datasets`', a `Dataset` subclass of the file), built
        here or held by a name or instance attribute every binding of which is one; where no binding shows the
        value (a parameter, a config field, an unpacking) the name breaks the tie (`val_loader`, `trainloader`)."""
        if depth > 4:
            return False
        if type(iterable) is cst.Call:
            return self._builds_data_source(iterable)
        bindings = None
        if type(iterable) is cst.Name and iterable in self.names.uses:
            bindings = self.names.reaching(iterable)
        elif type(iterable) is cst.Attribute and (owner := held_class(self.names, iterable.value)) is not None:
            bindings = self.names.attribute_reaching(owner, iterable.attr.value, iterable.value)  # type: ignore[arg-type]
        if bindings and all(b.bound_value is not None for b in bindings):
            return all(self._is_data_source(b.bound_value, depth + 1) for b in bindings)  # type: ignore[arg-type]
        iterated = dotted_name(iterable)
        words = (iterated or "").lower().replace(".", "_").split("_")
        return any(w in vocab.DATA_SOURCE_WORDS or w.endswith(("loader", "dataset", "batches")) for w in words)

    def _builds_data_source(self, call: cst.Call) -> bool:
        qualified = self.names.qualify(call.func) or ""
        if qualified.startswith(("torch.utils.data.", "datasets.")):
            return True
        if type(call.func) is cst.Name and call.func in self.names.uses:
            bindings = self.names.reaching(call.func)
            return len(bindings) == 1 and type(bindings[0].node) is cst.ClassDef and any(
                (self.names.qualify(base.value) or "").startswith("torch.utils.data.") for base in bindings[0].node.bases)
        return False

    def switches_to_eval(self, function: Optional[cst.FunctionDef]) -> bool:
        """The function puts a module in eval mode (`model.eval()`): what it collects is an evaluation's output."""
        if function is None:
            return False
        if function in self.names.scopes and function not in self.losses.enclosing.enclosing_functions():
            # the traversal has left the function: every call in it is among the calls the losses part recorded,
            # with the functions around it (asked for every accumulation site: the file's calls are read once)
            if self._evaluating is None or self._evaluating[0] != len(self.losses.sites):
                evaluating = {id(f) for site in self.losses.sites if _is_eval_switch(site.call) for f in site.functions}
                self._evaluating = (len(self.losses.sites), evaluating)
            return id(function) in self._evaluating[1]
        found = self._switches_to_eval.get(id(function))
        if found is None:
            found = self._switches_to_eval[id(function)] = any(_is_eval_switch(node) for node in code_nodes(function))
        return found

    # -- what a graph is used for (`flow/graph_uses.py`) ------------------------------------------------
    def feeds_backward(self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None, after: int = -1) -> bool:
        return self.uses.feeds_backward(spellings, function, cls, after)

    def backwards_of(
        self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None, after: int = -1
    ) -> Iterable[Backward]:
        return self.uses.backwards_of(spellings, function, cls, after)

    def feeds_return(self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None) -> bool:
        return self.uses.feeds_return(spellings, function, cls)


def _is_eval_switch(node: cst.CSTNode) -> bool:
    """`<module>.eval()` (exact types: asked of every node of a function)."""
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "eval" \
        and not node.args


def _names_outside_tests(expr: cst.CSTNode, calls: bool = True) -> list[cst.Name]:
    """The variables an expression reads, not counting the conditions of `a if cond else b` (nor, with
    `calls=False`, what is passed to a call: `Result(stats=stats)` is not `stats`)."""
    collector = _ReadsOutsideTests(calls)
    visit_readonly(expr, collector)
    return collector.found


class _ReadsOutsideTests(cst.CSTVisitor):
    def __init__(self, calls: bool) -> None:
        self.calls = calls
        self.found: list[cst.Name] = []

    def visit_Call(self, node: cst.Call) -> bool:
        if not self.calls:
            visit_readonly(node.func, self)
            return False
        return True

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        visit_readonly(node.body, self)
        visit_readonly(node.orelse, self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        visit_readonly(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        visit_readonly(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while type(expr) in (cst.Attribute, cst.Call, cst.Subscript):
        expr = expr.value if type(expr) in (cst.Attribute, cst.Subscript) else expr.func
    return expr.value if type(expr) is cst.Name else None

