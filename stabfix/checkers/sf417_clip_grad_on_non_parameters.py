"""SF417 clip-grad-on-non-parameters: gradient clipping handed a loss or a model output instead of parameters.

`clip_grad_norm_(tensors, max_norm)` and `clip_grad_value_(tensors, clip)` clip the `.grad` of the tensors
they are given. Handed the loss (`clip_grad_norm_(loss, 1.0)`) or an output of the model, they clip the
gradient of that non-leaf tensor, which autograd never fills in (`.grad` stays None): nothing is clipped,
no error is raised, and the model's gradients go into the step unclipped.

A query over the model: the clipping events (`events`: torch's functions through any import alias, the
legacy `clip_grad_norm`, a wrapper's `accelerator.clip_grad_norm_`; `events_through_calls`: a helper's clip
of what its caller hands it, reported at the call), and what their first argument is
(`history.origin`: a loss, or a model output, followed through names and arithmetic; `values`: a batch
drawn from a data loader, which has no gradient at all). Silent when the
argument is shown to be parameters (`values`: `model.parameters()`, a list of them, an optimizer's
`param_groups[0]["params"]`, a single `nn.Parameter`) and when nothing shows what it is.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.calls.event_kinds import Clip
from stabfix.model.flow.values import PARAMETER_ITERATORS
from stabfix.model.source.syntax import code_of


class ClipGradOnNonParameters(Checker):
    code = "SF417"
    tokens = ("clip_grad",)
    tokens_elsewhere = ("clip_grad", "backward")  # a helper of another module may clip (`events_through_calls`)
    needs = ("events", "history", "values", "events_through_calls")

    def leave_Module(self, original_node) -> None:
        events = self.model.events_through_calls  # a helper's clip of what the caller hands it counts at its call
        for clip in events.of_kind("clip"):
            assert isinstance(clip, Clip)
            clipped = clip.parameters or (None if events.via(clip) else _keyword(clip.node, "parameters"))
            value = self.model.values.value_of(clipped) if clipped is not None else None
            if value is None or value.parameter or _iterates_parameters(clipped):
                continue
            origin = self.model.history.origin(clipped) or ("a batch of input data" if value.batch else None)
            if origin is None:
                continue
            self.report(clip.node, (
                f"`{code_of(clip.node, 70)}` clips the gradient of `{code_of(clipped, 40)}`, {origin}, not of the "
                "model's parameters: autograd keeps no `.grad` for that non-leaf tensor, so nothing is clipped and "
                "the step applies the raw gradients; pass the parameters (`model.parameters()`)"))


def _keyword(call, keyword: str):
    """The argument passed as `keyword=` (`clip_grad_norm_(parameters=loss, max_norm=1.0)`)."""
    args = call.args if type(call) is cst.Call else ()
    return next((a.value for a in args if a.keyword is not None and a.keyword.value == keyword), None)


def _iterates_parameters(expr) -> bool:
    """`loss_fn.parameters()`, `model.named_parameters()`: a module's own parameters, whatever the module is
    (a loss with learnable weights included)."""
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in PARAMETER_ITERATORS
