"""The loss calls of each scope and their operands as tensor values: `scopes()` yields, per scope (a
function with its closures, or a module-level script; test code left out), the loss calls resolved by name
and those recognised by usage (two operands or more, a term of a loss), with their order (`ScopeLosses`);
`operands(site, loss)` gives each operand that is a tensor as a `LossOperand` (its slot, its own spelling
without value-keeping wrappers, its `ValueKey` with the alias steps that lead to it; `mse(gram(vgg(out)),
gram(vgg(ref)))` compares `out` with `ref`). About those operands: `is_prediction_slot(label)` (the slot
takes the prediction), `claims_another_role(reference)` (an alias on the way names a role its source's name
does not have), `alias_order(operand)` (the order of its first alias binding), `trains_identity(prediction,
reference)` (the prediction is computed from the very tensor a plain alias of the reference stands for, and
from a condition). Built on `tensors` (SF401).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from stabfix.model.calls.loss_operands import is_meta_operand, operand_positions, peel_common
from stabfix.model.calls.losses import CallSite, LossCall, identifier_words, loss_by_usage
from stabfix.model.flow.tensor_identity import TensorFacts, ValueKey, literal_key, strip_value_wrappers
from stabfix.model.source import vocabulary as vocab

PREDICTION_LABELS = ("#0", "input", "pred", "prediction", "preds", "predictions", "output", "outputs")


@dataclass
class LossOperand:
    label: str  # "#0" for the first positional argument, else the keyword
    expr: cst.BaseExpression
    spelled: str | None  # the operand's own name/spelling without value-keeping wrappers
    value: ValueKey


@dataclass
class ScopeLosses:
    by_name: list[tuple[CallSite, LossCall]]  # resolved by their callee
    by_usage: list[tuple[CallSite, LossCall]]  # recognised as terms of a loss
    order: dict[int, int]  # id() of every loss call of the scope -> its order (a node's own hash is a Python call)


class LossOperandValues:
    def __init__(self, tensors: TensorFacts) -> None:
        self.tensors = tensors
        self.losses = tensors.losses

    def scopes(self) -> Iterator[ScopeLosses]:
        """The loss calls of each scope, one scope at a time, in the order of the file's loss sites."""
        scopes: dict[cst.CSTNode, list[CallSite]] = {}
        for site in self.losses.sites:
            if site.outer is not None and not self.losses.in_test_code(site):
                scopes.setdefault(site.outer, []).append(site)
        for scope, sites in scopes.items():
            found = ScopeLosses([], [], {})
            usage = None
            for site in sites:
                loss = self.losses.resolve(site.call)
                if loss is not None:
                    found.by_name.append((site, loss))
                    found.order[id(site.call)] = site.order
                    continue
                if len(site.call.args) < 2:
                    continue
                if usage is None:
                    usage = self.tensors.loss_term_calls(scope)
                if site.call in usage:
                    found.by_usage.append((site, loss_by_usage(site.call)))
                    found.order[id(site.call)] = site.order
            yield found

    def operands(self, site: CallSite, loss: LossCall) -> list[LossOperand]:
        """The call's tensor operands as values (metadata operands and unknown values left out)."""
        operands: list[LossOperand] = []
        positions = operand_positions(loss)
        if len(positions) == 2:  # `mse(gram(vgg(out)), gram(vgg(ref)))` compares `out` with `ref`
            pair = peel_common(positions[0][1], positions[1][1])
            positions = [(positions[0][0], pair[0]), (positions[1][0], pair[1])]
        for label, expr in positions:
            if is_meta_operand(expr):
                continue
            value = self.tensors.value_key(expr)
            if value is None:
                continue
            stripped = strip_value_wrappers(expr, self.losses)[0]
            operands.append(LossOperand(label, expr, literal_key(stripped), value))
        return operands

    def trains_identity(self, prediction: LossOperand, reference: LossOperand) -> bool:
        """The prediction is computed from the very tensor the plain alias stands for and from a
        condition (`x1 = f(x_src, style_id)`, `ref = x_src`): the losses pull a conditional output toward
        its own input, so the condition can change nothing. A plain reconstruction (`recon = ae(x)`)
        legitimately targets its input under any name, and an alias made with `.detach()` or a copy
        says the author chose the input as the target knowingly."""
        if any(step.kind != "alias" for step in reference.value.steps):
            return False
        return self.tensors.conditioned_beyond(prediction.value.root, reference.value.key)


def is_prediction_slot(label: str) -> bool:
    """A slot that takes the prediction: the first positional operand, or a keyword naming a prediction."""
    if label in PREDICTION_LABELS:
        return True
    return not label.startswith("#") and bool(set(identifier_words(label)) & vocab.PREDICTION_WORDS)


def _roles(name: str) -> set[frozenset[str]]:
    words = set(identifier_words(name))
    return {role for role in vocab.ALIAS_ROLES if role & words}


def claims_another_role(reference: LossOperand) -> bool:
    """Some alias on the way names a role that the source's name does not have."""
    source_roles = _roles(reference.value.key)
    return bool(source_roles) and any(
        _roles(step.alias) and not (_roles(step.alias) & source_roles) for step in reference.value.steps
    )


def alias_order(reference: LossOperand) -> int:
    """The order of the first alias binding on the way to the operand's value, -1 with none (of two
    aliases of one tensor, the later is the placeholder)."""
    return reference.value.steps[0].binding.order if reference.value.steps else -1
