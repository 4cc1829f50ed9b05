"""Inputs that cannot require grad: what the code shows about a tensor handed to a segment of the model.

`GradInputs(module, names, values, imports)` answers `without_grad(expr, function, cls)`: the reason, in
words, why `expr` is shown never to require grad, or None when that is not shown (unknown is None):

- a cut (`.detach()`, `.data`) or an integer/boolean result (`.long()`, `ids > 0`), through moves,
  casts and views (`x.to(device).float()[:, :n]`) — the torch-operation table (`torch_ops`);
- a batch drawn from a `DataLoader`, or a tensor built from data or by a factory (`torch.tensor(rows)`,
  `torch.zeros(n)`) that is not asked to require grad — `values`;
- a value computed where autograd is off (`with torch.no_grad():`) — the binding's `grad_off`;
- the output of a frozen embedding (`self.embed(ids)` with `self.embed = nn.Embedding(...)` and a freeze
  that always runs first: `requires_grad_(False)`, `p.requires_grad = False`, peft — `adapters`; or
  built by `nn.Embedding.from_pretrained(vectors)`, frozen unless `freeze=False`);
- a name all of whose bindings are such values; a parameter of a model's `forward` when every call of
  the file's instances of that class (`net = Net(); net(x)`) passes such a value for it; any other
  parameter is not shown (None), and a name made to require grad (`x.requires_grad_()`,
  `x.requires_grad = True`) never counts.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.domain.adapters import AdapterFacts
from stabfix.model.flow.values import Values
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import visit_readonly

_MAX_DEPTH = 6
_EMBEDDINGS = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag"})
_PRETRAINED_EMBEDDINGS = frozenset({"torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained"})


class GradInputs:
    def __init__(self, module: cst.Module, names: Names, values: Values, imports: ImportTracker) -> None:
        self.module = module
        self.names = names
        self.values = values
        self.imports = imports
        self._adapters: Optional[AdapterFacts] = None
        self._marked: Optional[set[str]] = None
        self._following: set[int] = set()  # bindings being followed: `x = x.to(device)` in a loop reaches itself

    def without_grad(self, expr: cst.BaseExpression, function: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef],
                     depth: int = 0) -> Optional[str]:
        if depth > _MAX_DEPTH:
            return None
        stepped = torch_ops.step(expr, self.imports.qualify)
        if stepped is not None:
            operand, op = stepped
            if op.kind == "integer":
                return "an integer tensor (token ids, labels, a mask)"
            if op.kind == "cut":
                return "detached from the graph"
            return self.without_grad(operand, function, cls, depth + 1) if op.grad else None
        if type(expr) is cst.Name:
            return self._name(expr, function, cls, depth)
        value = self.values.value_of(expr)
        if value.detached:
            return "detached from the graph"
        if value.batch:
            return "a batch drawn from the data loader"
        if type(expr) is cst.Call:
            return self._call(expr, function, cls, depth)
        return None

    def _name(self, name: cst.Name, function, cls, depth: int) -> Optional[str]:
        if name.value in self._made_to_require_grad():
            return None
        reaching = self.names.reaching(name)
        if not reaching:
            return None
        if all(b.kind == "param" for b in reaching):
            return self._from_callers(name.value, function, cls, depth)
        reasons = []
        for binding in reaching:
            if id(binding) in self._following:
                continue  # the value it rebinds is judged by the other bindings
            if binding.grad_off:
                reasons.append("computed with autograd off (`no_grad`)")
                continue
            if binding.kind == "for" and self.values.binding_value(binding).batch:
                reasons.append("a batch drawn from the data loader")
                continue
            bound = binding.bound_value
            self._following.add(id(binding))
            try:
                reason = self.without_grad(bound, function, cls, depth + 1) if bound is not None else None
            finally:
                self._following.discard(id(binding))
            if reason is None:
                return None
            reasons.append(reason)
        return reasons[0] if reasons else None

    def _from_callers(self, parameter: str, function, cls, depth: int) -> Optional[str]:
        """A parameter of a model's `forward`: what every call of the file's instances of the class passes
        for it (`model = Net(); model(batch_x)`), when there is such a call and each is shown."""
        if function is None or cls is None or function.name.value != "forward":
            return None
        names = [p.name.value for p in function.params.params]
        if parameter not in names[1:]:
            return None
        position = names.index(parameter) - 1
        calls = self._instance_calls(cls)
        reasons = []
        for call in calls:
            positional = [arg.value for arg in call.args if arg.keyword is None]
            keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == parameter]
            if any(arg.star for arg in call.args):
                return None
            passed = keyword[0] if keyword else positional[position] if position < len(positional) else None
            reason = self.without_grad(passed, None, None, depth + 1) if passed is not None else None
            if reason is None:
                return None
            reasons.append(reason)
        return f"called with {reasons[0]} for `{parameter}`" if reasons else None

    def _instance_calls(self, cls: cst.ClassDef) -> list[cst.Call]:
        """Calls of names bound only to instances of `cls` built in this file (`net = Net(); net(x)`)."""
        calls = _InstanceCalls(self.names, cls.name.value)
        visit_readonly(self.module, calls)
        return calls.found

    def _call(self, call: cst.Call, function, cls, depth: int) -> Optional[str]:
        if any(arg.keyword is not None and arg.keyword.value == "requires_grad" for arg in call.args):
            return None
        value = self.values.value_of(call)
        if value.constant:
            return "a constant tensor built from data or by a factory"
        if self._frozen_embedding(call.func, call, function, cls):
            return f"the output of the frozen embedding `{dotted_name(call.func)}`"
        return None

    def _frozen_embedding(self, callee: cst.BaseExpression, call: cst.Call, function, cls) -> bool:
        built = [v for v in self._built_from(callee) if type(v) is cst.Call]
        kinds = {self.imports.qualify(v.func) for v in built}
        if not built or not kinds <= _EMBEDDINGS | _PRETRAINED_EMBEDDINGS:
            return False
        if all(self.imports.qualify(v.func) in _PRETRAINED_EMBEDDINGS and _keeps_frozen(v) for v in built):
            return True  # `nn.Embedding.from_pretrained(vectors)` is frozen unless `freeze=False`
        if self._adapters is None:
            self._adapters = AdapterFacts(self.module, self.names)
        return self._adapters.frozen_before(call, callee, function, cls)

    def _built_from(self, callee: cst.BaseExpression) -> list[cst.BaseExpression]:
        if type(callee) is cst.Name:
            return [b.bound_value for b in self.names.reaching(callee) if b.bound_value is not None]
        if type(callee) is cst.Attribute and type(callee.value) is cst.Name and callee.value.value == "self":
            owner_scope = self.names.scope_of(callee.value)
            owner = self.names.enclosing_class(owner_scope) if owner_scope is not None else None
            if owner is not None:
                return [b.bound_value for b in self.names.attribute_bindings(owner, callee.attr.value) if b.bound_value is not None]
        return []

    def _made_to_require_grad(self) -> set[str]:
        """Names the file makes require grad in place: `x.requires_grad_()`, `x.requires_grad = True`."""
        if self._marked is None:
            marks = _GradMarks()
            visit_readonly(self.module, marks)
            self._marked = marks.marked
        return self._marked


class _InstanceCalls(cst.CSTVisitor):
    """Calls of names bound only to `ClassName(...)` calls."""

    def __init__(self, names, class_name: str) -> None:
        self.names = names
        self.class_name = class_name
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is not cst.Name:
            return
        values = [b.bound_value for b in self.names.reaching(node.func)]
        if values and all(type(v) is cst.Call and type(v.func) is cst.Name and v.func.value == self.class_name
                          for v in values):
            self.found.append(node)


class _GradMarks(cst.CSTVisitor):
    def __init__(self) -> None:
        self.marked: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "requires_grad_" and type(func.value) is cst.Name:
            if not node.args or not (type(node.args[0].value) is cst.Name and node.args[0].value.value == "False"):
                self.marked.add(func.value.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if type(t) is cst.Attribute and t.attr.value == "requires_grad" and type(t.value) is cst.Name:
                self.marked.add(t.value.value)


def _keeps_frozen(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "freeze":
            return type(arg.value) is cst.Name and arg.value.value == "True"
    return True
