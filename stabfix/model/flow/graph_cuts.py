"""Graph cuts: places that cut a value from the autograd graph and make the copy require grad again.

`out.detach().requires_grad_()`, `out.clone().detach().requires_grad_(True)`, `out.data.requires_grad_()`,
`Variable(out.data, requires_grad=True)`, `torch.tensor(out, requires_grad=True)` all build a new
leaf tensor with the values of `out` and no history: gradients reaching the copy stop there. The
model's `cuts` part records each such re-leaf during the traversal, with what it copies, the names
the statement binds, and the functions it sits in; `source_of(cut)` says (through `values`) whether
the copied value is a model's output or a loss, so a rule can ask "is this cut on the path from a
model to its loss?". SF101 asks the mirror question about loss targets.

It also records, in `reenabled`, tensors switched to require grad in place without a copy:
`loss.requires_grad = True` (torch allows it only on a leaf, so the tensor has no history when it runs)
and `loss.requires_grad_()` / `loss.requires_grad_(True)` on a plain name (a no-op on a tensor that has
history, a fresh leaf on one that has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.losses import read_names
from stabfix.model.flow.gradient_use import is_requires_grad_call, is_true, requires_grad_keyword
from stabfix.model.flow.gradient_use import contains
from stabfix.model.flow.values import Value, Values
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.node_fields import visit_readonly

_COPYING = frozenset({"torch.tensor", "torch.from_numpy"})


@dataclass(frozen=True, eq=False)
class Cut:
    node: cst.Call  # the call that makes the copy require grad
    copied: cst.BaseExpression  # what is copied (`out` of `out.detach().requires_grad_()`)
    bound: tuple[str, ...]  # names the enclosing assignment binds (`pred` of `pred = ...`)
    function: Optional[cst.FunctionDef]  # innermost enclosing function
    outer: cst.CSTNode  # outermost enclosing function, or the module


@dataclass(frozen=True, eq=False)
class Reenabled:
    node: cst.CSTNode  # the `x.requires_grad = True` assignment or the `x.requires_grad_()` call
    tensor: cst.Name  # `x`
    setter: bool  # `x.requires_grad = True` (leaf only) rather than `x.requires_grad_()`
    function: Optional[cst.FunctionDef]  # innermost enclosing function


class GraphCuts(cst.BatchableCSTVisitor):
    def __init__(self, imports: ImportTracker, enclosing: EnclosingDefinitions, values: Values) -> None:
        super().__init__()
        self.imports = imports
        self.enclosing = enclosing
        self.values = values
        self.cuts: list[Cut] = []
        self.reenabled: list[Reenabled] = []
        self._targets: list[list[tuple[tuple[str, ...], cst.BaseExpression]]] = []
        self._module: Optional[cst.Module] = None

    def source_of(self, cut: Cut) -> Value:
        return self.values.value_of(cut.copied)

    def computed_from(self, cut: Cut) -> set[str]:
        """The names bound (in the cut's outermost scope) to tensor math on the copy: `loss = -(logp *
        returns).mean()` after `logp = ...requires_grad_()`. Math only (operators, torch functions,
        the tensor's own methods): a call of a model or of unseen code has parameters of its own."""
        names = self.values.names
        derived = set(cut.bound)
        bindings = [
            b for b in names.bindings_within(cut.outer)
            if b.bound_value is not None and b.name not in derived
        ]
        changed = True
        while changed:
            changed = False
            for binding in bindings:
                if binding.name in derived:
                    continue
                value = binding.bound_value
                if read_names(value) & derived and self._only_math(value, derived) and not self._other_graph(value, derived):
                    derived.add(binding.name)
                    changed = True
        return derived

    def _other_graph(self, expr: cst.CSTNode, derived: set[str]) -> bool:
        """The math also reads another value with autograd history (a model's output): gradients reach
        that one (`F.mse_loss(encoder_outputs, copy)` trains the encoder; only the copy's side stops)."""
        names = self.values.names
        finder = _NameCollector()
        visit_readonly(expr, finder)
        for node in finder.found:
            if node.value in derived or node not in names.uses:
                continue
            value = self.values.value_of(node)
            if value.model_output or (value.call and not (value.constant or value.not_tensor or value.batch)):
                return True
        return False

    def _only_math(self, expr: cst.CSTNode, derived: set[str]) -> bool:
        finder = _CallCollector()
        visit_readonly(expr, finder)
        for call in finder.calls:
            if (self.imports.qualify(call.func) or "").startswith("torch."):
                continue
            if type(call.func) is cst.Attribute and read_names(call.func.value) & derived:
                continue  # a method of the copy (or of math on it): `.mean()`, `.gather(...)`
            return False
        return True

    # -- traversal ------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self._targets.append(torch_ops.assigned(node))
        for target in node.targets:
            attribute = target.target
            if (type(attribute) is cst.Attribute and attribute.attr.value == "requires_grad"
                    and type(attribute.value) is cst.Name and is_true(node.value)):
                self._reenable(node, attribute.value, setter=True)

    def _reenable(self, node: cst.CSTNode, tensor: cst.Name, setter: bool) -> None:
        functions = self.enclosing.enclosing_functions()
        self.reenabled.append(Reenabled(node, tensor, setter, functions[-1] if functions else None))

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._targets.pop()

    def visit_Call(self, node: cst.Call) -> None:
        marks = is_requires_grad_call(node)
        copied = self._copied(node, marks)
        if copied is None:
            if marks and type(node.func.value) is cst.Name:  # type: ignore[attr-defined]
                self._reenable(node, node.func.value, setter=False)  # type: ignore[attr-defined]
            return
        functions = self.enclosing.enclosing_functions()
        self.cuts.append(
            Cut(
                node=node,
                copied=copied,
                bound=self._bound(node),
                function=functions[-1] if functions else None,
                outer=functions[0] if functions else self._module,  # type: ignore[arg-type]
            )
        )

    def _bound(self, call: cst.Call) -> tuple[str, ...]:
        """The names the enclosing assignment binds the cut's value to: its plain targets, or the name an
        element of a tuple display is unpacked into (`pred, aux = Variable(out.data, ...), h`)."""
        if not self._targets:
            return ()
        pairs = self._targets[-1]
        for names, value in pairs[1:]:
            if contains(value, call):
                return names
        return pairs[0][0]

    def _copied(self, call: cst.Call, marks: bool) -> Optional[cst.BaseExpression]:
        """What a re-leafing call copies, or None when it is not one (or copies nothing it cut). `marks`:
        the call is a `requires_grad_()` (`is_requires_grad_call`)."""
        if marks:
            receiver = call.func.value  # type: ignore[attr-defined]
            if type(receiver) is cst.Call and self.imports.qualify(receiver.func) in _COPYING and receiver.args:
                return _strip_cuts(receiver.args[0].value, self.imports.qualify)[0]  # `torch.from_numpy(out.numpy()).requires_grad_()`
            inner, cut = _strip_cuts(receiver, self.imports.qualify)
            return inner if cut else None  # `x.requires_grad_()`, `x.clone().requires_grad_()` keep the graph
        if requires_grad_keyword(call, self.imports) is None or not call.args or call.args[0].keyword is not None:
            return None
        qualified = self.imports.qualify(call.func) or ""
        first = call.args[0].value
        inner, cut = _strip_cuts(first, self.imports.qualify)
        if qualified in _COPYING:
            return inner
        if torch_ops.is_wrapper(qualified):
            return inner if cut else None  # `Variable(x.data, requires_grad=True)`
        return None


class _NameCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


class _CallCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _strip_cuts(expr: cst.BaseExpression, qualify=None) -> tuple[cst.BaseExpression, bool]:
    """`out.clone().detach()` -> (`out`, True); `out.data[:, 0]` -> (`out`, True); `out.float().view(-1)` ->
    (`out`, False): through every operation of the torch table that keeps the values (moves, casts,
    views, indexing, copies), `True` when one of them drops the autograd history."""
    cut = False
    while True:
        found = torch_ops.step(expr, qualify)
        if found is None or found[1].kind in ("metadata", "integer", "mark", "container"):
            return expr, cut
        expr, op = found
        cut = cut or not op.history
