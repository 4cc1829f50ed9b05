"""SF409 prediction-cut-from-graph: a model's output (or a loss) is copied out of the autograd graph
and made to require grad again, then trained on: no gradient reaches the model.

A query over the `cuts` part (re-leafing copies and what they copy; through `values`, copies of
data, parameters and constant tables are left out: saliency maps and attacks start from those) and
`gradients` (which names a scope differentiates, returns, and feeds to which loss). A cut is reported when its copy is
- the prediction of a loss (`crit(pred, y)` after `pred = Variable(out.data, requires_grad=True)`),
- itself backpropagated (`loss = torch.tensor(loss, requires_grad=True); loss.backward()`), or
- returned from a module's `forward` (every caller's loss stops there), or
- returned from a function whose caller in the file backpropagates what it returns, or makes it the
  prediction of a loss (the caller's value is, by the function's summary, a leaf made to require grad:
  `loss = photometric_loss(a, b); loss.backward()`; `functions/trained_returns.py`),
and nothing reads the copy's gradient (`pred.grad`, `autograd.grad(..., pred)`, an optimizer over it:
the decoupled-backward trick `out.backward(pred.grad)` is legitimate). Also reported: a loss switched
to require grad in place and then backpropagated (`cuts.reenabled`: `loss.requires_grad = True`, which
torch allows only on a leaf; `loss.requires_grad_()` when `history` shows the loss has none; also by a
function it is handed to, by that function's summary: `mark_trainable(loss)`), and losses
copied into a fresh tensor (`torch.tensor([l1, l2]).sum()`) that a backward pass differentiates.
Report only.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.flow.gradient_use import contains, inside, names_in, target_roots
from stabfix.model.flow.graph_cuts import Cut, Reenabled
from stabfix.model.flow.history import LOSS
from stabfix.model.functions.summary_facts import LEAF_SETTER
from stabfix.model.functions.trained_returns import trained_return
from stabfix.shape_queries import Shape, backward_calls, releafs

_MAX_TEXT = 60
_FRESH_COPIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor"})


class PredictionCutFromGraph(Checker):
    code = "SF409"
    tokens = ("requires_grad", "tensor(", "Tensor(")
    # and a cut or switch spells `requires_grad`; copied losses (or a helper's switch) need a `.backward()` here
    also_needs = (("detach", ".data", "tensor(", "Tensor(", "numpy", "backward"), ("requires_grad", "backward"))
    needs = ("cuts", "gradients", "events", "summaries", "history", "values")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # a cut or switch spelled here, or a backward (a helper's switch, copied losses)
        return releafs(shape) or bool(backward_calls(shape))

    def __init__(self, context) -> None:
        super().__init__(context)
        self._fresh_copies: list[cst.Call] = []  # `torch.tensor(...)` and the like: fresh tensors from values
        self._calls_with_names: list[tuple[cst.Call, object]] = []  # a helper may mark a name it is handed

    def leave_Module(self, original_node: cst.Module) -> None:
        copies = [call for call in self._fresh_copies if self._check_copied_losses(call)]
        for cut in self.model.cuts.cuts:
            source = self.model.cuts.source_of(cut)
            if any(cut.node is call for call in copies):
                continue  # reported as losses copied by value
            if source.constant or source.batch or source.parameter or source.not_tensor:
                continue  # data, parameters and constant tables start saliency maps and attacks
            use = self._trained_on(cut)
            if use is not None:
                what = "a loss" if "backpropagated" in use else "a model output"
                self.report(cut.node, _message(cut, what, use))
        for found in [*self.model.cuts.reenabled, *self._reenabled_by_calls()]:
            backward = self._backward_after(found.tensor, found.function) if self._leaf_loss(found) else None
            if backward is not None:
                self.report(found.node, _reenabled_message(found, backward))

    def _reenabled_by_calls(self) -> list[Reenabled]:
        """A call of a function (of this file or another scanned one) whose summary makes the argument
        require grad in place: `mark_trainable(loss)` running `loss.requires_grad = True`."""
        found = []
        for call, function in self._calls_with_names:
            for effect in self.model.summaries.effects_at(call):
                tensor = next((arg.value for arg in call.args if type(arg.value) is cst.Name
                               and arg.value.value == effect.target), None) if effect.kind == "requires_grad" else None
                if tensor is not None:
                    found.append(Reenabled(call, tensor, effect.detail == LEAF_SETTER, function))
        return found

    def visit_Call(self, node: cst.Call) -> None:
        if any(type(arg.value) is cst.Name for arg in node.args):  # exact type: every call of the file
            self._calls_with_names.append((node, self.model.enclosing.innermost_function()))
        if node.args and (self.context.imports.qualify(node.func) or "") in _FRESH_COPIES:
            self._fresh_copies.append(node)

    def _leaf_loss(self, found: Reenabled) -> bool:
        """A loss that has no autograd history where it is switched on: always so for the setter (torch
        refuses it on a tensor with history); for `requires_grad_()`, when the code shows none (built from values, detached)."""
        value = self.model.values.value_of(found.tensor)
        origin = self.model.history.origin(found.tensor)
        cut = origin is None or value.constant or value.detached  # copied from values, `.detach()`ed
        return (origin == LOSS or value.reduced) if found.setter else (cut and value.reduced)

    def _backward_after(self, tensor: cst.Name, function) -> cst.Call | None:
        use = self.model.names.uses.get(tensor)
        if use is None:
            return None
        for event in self.model.history.backwards_of({tensor.value}, function, after=use.order):
            return event.node  # type: ignore[return-value]
        return None

    def _check_copied_losses(self, call: cst.Call) -> bool:
        """`torch.tensor([l1, l2])` over losses, differentiated: the copy holds their values, not their graphs."""
        elements = call.args[0].value
        if type(elements) not in (cst.List, cst.Tuple):
            return False
        losses = [e.value for e in elements.elements if self.model.history.origin(e.value) == LOSS]
        for event in self.model.events.of_kind("backward"):
            if losses and event.loss is not None and (contains(event.loss, call) or self._feeds(call, event)):  # type: ignore[attr-defined]
                self.report(call, _copied_losses_message(call, losses, event.node))
                return True
        return False

    def _feeds(self, call: cst.Call, event) -> bool:
        scope = event.site.function or self.model.names.module_scope.node
        bound = {b.name for b in self.model.names.bindings_within(scope) if b.value is not None and contains(b.value, call)}
        return bool(bound) and self.model.history.feeds_backward(bound, event.site.function)

    def _trained_on(self, cut: Cut) -> str | None:
        """How the copy is trained on, when nothing reads its gradient."""
        facts = self.model.gradients.of(cut.outer)
        if set(cut.bound) & facts.differentiated:
            return None
        names = self.model.cuts.computed_from(cut)  # the copy's names and math on them
        imports = self.context.imports
        for loss in facts.losses:
            prediction = loss.prediction
            if prediction is None:
                continue
            if inside(cut.node, prediction, self.model.tree.parent) or (names and target_roots(prediction, imports) & names):
                return f"the prediction of `{_text(loss.call)}`"
        for call in facts.calls:
            func = call.func
            if type(func) is cst.Attribute and func.attr.value == "backward" and not call.args:
                if inside(cut.node, func.value, self.model.tree.parent) or (
                    type(func.value) is cst.Name and func.value.value in names and self._after(func.value, cut)
                ):
                    return f"backpropagated by `{_text(call)}`"
        function = cut.function
        if function is None:
            return None
        returns = self.model.names.returns.get(function, [])
        if not any(names & names_in(value) or inside(cut.node, value, self.model.tree.parent) for value in returns):
            return None
        if function.name.value == "forward":
            return "returned from `forward` (so is every loss on the module's output)"
        found = trained_return(function, self.model.names, self.model.summaries, self.model.gradients, self.model.events)
        if found is None:
            return None
        call, loss = found
        how = "which is backpropagated" if loss is None else f"the prediction of `{_text(loss.call)}`"
        return f"returned to `{_text(call)}`, {how}"

    def _after(self, name: cst.Name, cut: Cut) -> bool:
        """The use comes after the cut (`loss.backward(); loss = loss.detach().requires_grad_()` hands a
        fresh leaf to a caller after the real backward: the gradient-cache trick)."""
        uses = self.model.names.uses
        use = uses.get(name)
        cut_reads = [uses[n].order for n in _names(cut.node) if n in uses]
        return use is not None and bool(cut_reads) and use.order > min(cut_reads)


def _names(node: cst.CSTNode) -> list[cst.Name]:
    found = [node] if type(node) is cst.Name else []
    for child in node.children:
        found.extend(_names(child))
    return found


def _message(cut: Cut, what: str, use: str) -> str:
    copied = _text(cut.copied)
    return (
        f"`{_text(cut.node)}` copies {what} (`{copied}`) out of the autograd graph and is {use}: "
        f"gradients stop at the copy and never reach the model; use `{copied}` itself"
    )


def _reenabled_message(found: Reenabled, backward: cst.CSTNode) -> str:
    return (
        f"`{_text(found.node)}` makes a loss with no autograd history require grad, and `{_text(backward)}` then "
        f"backpropagates it: this silences \"element 0 of tensors does not require grad\" but the gradient stops "
        f"at `{found.tensor.value}` and no parameter is trained; find where the loss was cut from the model "
        "(`.detach()`, `.item()`, `.data`, `torch.no_grad()`, numpy, `torch.tensor(...)`) and keep the graph"
    )


def _copied_losses_message(call: cst.Call, losses: list, backward: cst.CSTNode) -> str:
    return (
        f"`{_text(call)}` copies the values of {', '.join(f'`{_text(l)}`' for l in losses)} into a new tensor with "
        f"no autograd history, and `{_text(backward)}` differentiates it: no gradient flows through those losses; "
        "use `torch.stack([...])` (or add them) to keep the graph"
    )


def _text(node: cst.CSTNode) -> str:
    code = " ".join(cst.Module(body=[]).code_for_node(node).split())
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
