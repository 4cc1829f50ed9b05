"""SF401 reference-aliases-source: a loss's reference is (an alias of) the tensor it should differ from.

Two shapes, both found per scope (a function with its closures, or a module-level script):

* one loss call gets the same tensor for two operands — `F.mse_loss(x, x)`, or
  `self.energy_loss(x_1, x_style_ref, x_src)` after `x_style_ref = x_src` (the seed);
* two loss calls on the same prediction whose references are different names for the same tensor —
  `swd(x1, x_style_ref)` next to `ssm(x1, x_src)` after `x_style_ref = x_src`.

Aliases are followed only where they provably hold (see `stabfix.model.flow.tensor_identity`); a
`.clone()`/`.detach()`/`.to()` copy counts as the same tensor because it holds the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import libcst as cst

from stabfix.model.calls.losses import CallSite, LossCall
from stabfix.model.flow.loss_operand_values import (PREDICTION_LABELS, LossOperand, LossOperandValues, ScopeLosses, alias_order,
                                                    claims_another_role, is_prediction_slot)
from stabfix.model.flow.tensor_identity import COPY_METHODS, VIEW_METHODS, AliasStep, spells_whole_value
from stabfix.checker import Checker
from stabfix.model.source.syntax import node_code
from stabfix.shape import Shape

_MAX_CALL_TEXT = 70


@dataclass
class _Pending:  # a finding whose message still needs the line of an alias binding: build(line_of) -> message
    node: cst.Call
    build: object


class ReferenceAliasesSource(Checker):
    code = "SF401"
    tokens = ("loss", "Loss", "criterion", "backward", "objective")
    needs = ("names", "losses", "tensors", "loss_operand_values")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # the same tensor twice, through an alias binding (`ref = x_src.clone()`) or two operands of one call reading one name
        root = partial(shape.value_root, methods=VIEW_METHODS | COPY_METHODS, functions=shape.spellings("clone", "deepcopy", "copy"))
        if any(root(value) not in (None, "self") for value in shape.assigned_values()):
            return True
        return any(len(roots) > len(set(roots)) for call in shape.all_calls() if len(call.args) + len(call.keywords) > 1
                   for roots in [[*filter(None, map(root, [*call.args, *(k.value for k in call.keywords if k.arg)]))]])

    def leave_Module(self, original_node: cst.Module) -> None:
        values = self.model.loss_operand_values
        pending: list[_Pending] = []
        for scope in values.scopes():
            pending.extend(_ScopeAnalysis(values, scope).findings())
        if not pending:
            return
        # the lines come from the file's shared position table, which locates the findings next
        for item in pending:
            self.report(item.node, item.build(self.context.positions.line))


class _ScopeAnalysis:
    """The loss calls of one scope, their operands as values, and the two shapes of the rule."""

    def __init__(self, values: LossOperandValues, scope: ScopeLosses):
        self.values = values
        self.by_name, self.by_usage, self.order = scope.by_name, scope.by_usage, scope.order

    def findings(self) -> list[_Pending]:
        found: list[_Pending] = []
        reported: set[int] = set()
        for site, loss in self.by_name:
            pending = self._same_operand_twice(site, loss)
            if pending is not None:
                found.append(pending)
                reported.add(id(site.call))
        found.extend(self._references_alias_each_other(reported))
        return found

    # shape 1: one call, the same tensor twice ----------------------------------------------------
    def _same_operand_twice(self, site: CallSite, loss: LossCall) -> _Pending | None:
        operands = self.values.operands(site, loss)
        groups: dict[str, list[LossOperand]] = {}
        for operand in operands:
            groups.setdefault(operand.value.key, []).append(operand)
        # The same prediction handed to two prediction slots (`loss_function(logits=p, pooled_logits=p,
        # labels=y)`, a dispatcher whose variants name their input differently) compares nothing with
        # itself: a repeat matters only when the tensor also fills a reference slot.
        repeated = [
            group
            for group in groups.values()
            if len(group) > 1 and not all(is_prediction_slot(op.label) for op in group)
        ]
        if not repeated:
            return None
        prediction = operands[0] if is_prediction_slot(operands[0].label) else None
        aliased = [group for group in repeated if any(op.value.steps for op in group)]
        if aliased:
            group = aliased[0]  # an alias says the author meant a different tensor
        elif loss.library:
            group = repeated[0]  # `F.mse_loss(x, x)`
        elif len(repeated) == 1 and len(repeated[0]) == 2 and (len(operands) == 2 or prediction not in repeated[0]):
            group = repeated[0]  # `crit(pred, pred)`, `energy_loss(x_1, x_src, x_src)`
        else:
            # A user loss with several slots that repeats several of them on purpose, e.g. DetCon's
            # `loss(view0, view1, view0, view1, ...)` (predictions and targets from the same branch).
            return None
        return _Pending(site.call, _same_operand_message(site.call, loss, group[0].value.key, group, prediction))

    # shape 2: two calls on one prediction, references aliasing each other -----------------------------
    def _references_alias_each_other(self, reported: set[int]) -> list[_Pending]:
        calls = sorted(self.by_name + self.by_usage, key=lambda item: self.order[id(item[0].call)])
        described = []
        for site, loss in calls:
            operands = self.values.operands(site, loss)
            if len(operands) < 2 or operands[0].label not in PREDICTION_LABELS:
                continue
            references = [op for op in operands[1:] if spells_whole_value(op.spelled)
                          and op.value.key != operands[0].value.key and not is_prediction_slot(op.label)]
            if references:
                described.append((site, loss, operands[0], references))
        found: list[_Pending] = []
        for i, (site_a, loss_a, pred_a, refs_a) in enumerate(described):
            for site_b, loss_b, pred_b, refs_b in described[i + 1 :]:
                if pred_a.value.key != pred_b.value.key or self._prediction_changes(pred_a, site_a, site_b):
                    continue
                for ref_a in refs_a:
                    for ref_b in refs_b:
                        if ref_a.value.key != ref_b.value.key or ref_a.spelled == ref_b.spelled:
                            continue
                        # report at the call whose reference goes through the (later) alias
                        alias_site, alias_ref, alias_loss, other_site, other_ref, other_loss = \
                            (site_b, ref_b, loss_b, site_a, ref_a, loss_a) if alias_order(ref_b) > alias_order(ref_a) \
                            else (site_a, ref_a, loss_a, site_b, ref_b, loss_b)
                        if id(alias_site.call) in reported:
                            continue
                        if not (claims_another_role(alias_ref) or self.values.trains_identity(pred_a, alias_ref)):
                            continue  # two losses toward one real target, named twice (`gt_usm = gt`)
                        reported.add(id(alias_site.call))
                        found.append(_Pending(alias_site.call, _two_losses_message(
                            alias_site.call, alias_ref, other_site.call, other_ref, pred_a, alias_loss, other_loss)))
        return found

    def _prediction_changes(self, prediction: LossOperand, first: CallSite, second: CallSite) -> bool:
        return self.values.tensors.changes_between(prediction.expr, prediction.value, self.order[id(first.call)], self.order[id(second.call)])


def _call_text(call: cst.Call, loss: LossCall) -> str:
    code = " ".join(node_code(call).split())
    return code if len(code) <= _MAX_CALL_TEXT else f"{loss.display}(...)"


def _describe_alias(step: AliasStep, root: str, line_of) -> str:
    """"`x_style_ref` is an alias of `x_src` (line 320)"."""
    line = line_of(step.binding.node)
    where = f"line {line}" if line else "same function"
    via = f", via `{step.source}`" if step.source != root else ""
    if step.kind == "copy":
        return f"`{step.alias}` is a copy of `{root}` with the same values ({where}{via})"
    return f"`{step.alias}` is an alias of `{root}` ({where}{via})"


def _same_operand_message(call: cst.Call, loss: LossCall, key: str, group: list[LossOperand], prediction):
    def build(line_of) -> str:
        text = _call_text(call, loss)
        aliased = next((op for op in group if op.value.steps), None)
        head = _describe_alias(aliased.value.steps[0], key, line_of) + ": " if aliased is not None else ""
        names = ", ".join(f"`{op.spelled or key}`" for op in group)
        if prediction is not None and any(op is prediction for op in group):
            return (
                f"{head}`{text}` compares `{key}` with itself ({names}): the loss is constant and trains "
                "nothing; pass the model's prediction and a separate reference tensor"
            )
        pred = f"`{prediction.spelled}`" if prediction is not None and prediction.spelled else "the prediction"
        subject = f"`{aliased.spelled}`" if aliased is not None else "each reference"
        return (
            f"{head}`{text}` receives `{key}` for two different references ({names}), so every term pulls "
            f"{pred} toward the same tensor and the loss trains an identity mapping; give {subject} its own "
            "tensor (e.g. a batch sampled from the target distribution)"
        )

    return build


def _two_losses_message(alias_call, alias_ref, other_call, other_ref, prediction, alias_loss, other_loss):
    def build(line_of) -> str:
        key = alias_ref.value.key
        step = alias_ref.value.steps[0] if alias_ref.value.steps else other_ref.value.steps[0]
        pred = prediction.spelled or prediction.value.key
        return (
            f"{_describe_alias(step, key, line_of)}: `{_call_text(alias_call, alias_loss)}` and "
            f"`{_call_text(other_call, other_loss)}` both pull `{pred}` toward `{key}`, so the two losses "
            f"cannot pull it toward different targets and training learns an identity mapping; give "
            f"`{alias_ref.spelled}` its own tensor (e.g. a batch sampled from the target distribution)"
        )

    return build
