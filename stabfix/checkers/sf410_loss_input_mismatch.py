"""SF410 loss-input-mismatch: a loss is fed another kind of input than it expects.

A query over two model parts: `losses` (every torch loss call and its input operand) and
`activations` (which output activation the input has had last, through names, held modules,
`Sequential`s and the `forward` of same-file models). Reported:
- softmax or sigmoid outputs into `cross_entropy`/`CrossEntropyLoss`, which applies `log_softmax`
  itself (log-softmax outputs are left alone: `log_softmax` of log-probabilities changes nothing);
- sigmoid outputs into `binary_cross_entropy_with_logits`/`BCEWithLogitsLoss`, which applies `sigmoid`;
- raw linear-layer outputs into `binary_cross_entropy`/`BCELoss` (it needs probabilities), and raw
  outputs or probabilities into `nll_loss`/`NLLLoss`, `ctc_loss`/`CTCLoss` and `kl_div`/`KLDivLoss` (they
  need log-probabilities);
- a log-softmax of values that already were probabilities (`F.log_softmax(F.softmax(x))`, a model that ends
  in softmax) into any of the losses that take scores or log-probabilities.
Equivalent spellings are the model's business (`torch.exp(F.log_softmax(x))` is a softmax).
Fix (unsafe, it changes the loss values): drop an extra activation written inline in the loss call.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.calls.activations import Activation
from stabfix.model.source.syntax import node_code

# What each torch loss expects as its input, and the message for each kind it must not get.
_LOGITS_LOSSES = ("cross_entropy", "CrossEntropyLoss")
_LOGIT_BINARY = ("binary_cross_entropy_with_logits", "BCEWithLogitsLoss")
_PROBABILITY_BINARY = ("binary_cross_entropy", "BCELoss")
_LOG_PROBABILITY = ("nll_loss", "NLLLoss")
_DIVERGENCE = ("kl_div", "KLDivLoss")
_CTC = ("ctc_loss", "CTCLoss")
# A log-softmax of values that already were probabilities: the scores were normalised twice.
_TWICE = "log_softmax_of_probabilities"
_SQUASHED = "gets log_softmax of probabilities, which squashes every score toward -log(C), so the gradients shrink"

_WRONG = {
    _LOGITS_LOSSES: {
        "softmax": "applies log_softmax itself, so the softmax is applied twice and the gradients shrink",
        "sigmoid": "applies log_softmax itself and expects raw scores, not sigmoid outputs",
        _TWICE: _SQUASHED,
    },
    _LOGIT_BINARY: {"sigmoid": "applies sigmoid itself, so the sigmoid is applied twice and the gradients vanish"},
    _PROBABILITY_BINARY: {"logits": "expects probabilities in [0, 1], not raw scores"},
    _LOG_PROBABILITY: {
        "logits": "expects log-probabilities, not raw scores",
        "softmax": "expects log-probabilities, not probabilities",
        "sigmoid": "expects log-probabilities, not probabilities",
        _TWICE: _SQUASHED,
    },
    _CTC: {
        "logits": "expects log-probabilities (log_softmax over the classes), not raw scores",
        "softmax": "expects log-probabilities (log_softmax over the classes), not probabilities",
        "sigmoid": "expects log-probabilities (log_softmax over the classes), not probabilities",
        _TWICE: _SQUASHED,
    },
    _DIVERGENCE: {
        "logits": "expects log-probabilities as its input, not raw scores",
        "softmax": "expects log-probabilities as its input, not probabilities",
        "sigmoid": "expects log-probabilities as its input, not probabilities",
        _TWICE: _SQUASHED,
    },
}
_ADVICE = {
    _LOGITS_LOSSES: "pass the raw logits",
    _LOGIT_BINARY: "pass the raw logits",
    _PROBABILITY_BINARY: "use `binary_cross_entropy_with_logits`/`BCEWithLogitsLoss` on them (numerically stable)",
    _LOG_PROBABILITY: "apply `log_softmax` to the logits (or use `cross_entropy` on them)",
    _DIVERGENCE: "pass `log_softmax` of the logits (the target stays probabilities unless `log_target=True`)",
    _CTC: "apply `log_softmax` to the raw scores",
}
# Activations the fix can drop: the loss applies them itself.
_DROPPABLE = {_LOGITS_LOSSES: ("softmax",), _LOGIT_BINARY: ("sigmoid",)}
_MAX_TEXT = 60


def _family(kind: str) -> Optional[tuple[str, ...]]:
    if not kind.startswith("torch."):
        return None
    last = kind.rsplit(".", 1)[-1]
    return next((family for family in _WRONG if last in family), None)


class LossInputMismatch(Checker):
    code = "SF410"
    tokens = (
        "cross_entropy", "CrossEntropyLoss", "nll_loss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "kl_div", "KLDivLoss",
        "ctc_loss", "CTCLoss",
    )
    also_needs = (("softmax", "Softmax", "sigmoid", "Sigmoid", "expit", "Linear", "linear", "Conv"),)
    # the model (and its softmax) or the criterion may be a class of another scanned file; the loss is
    # computed in this file, so it trains something here
    tokens_elsewhere = ("loss", "Loss", "criterion", "backward")
    needs = ("losses", "activations", "summaries")

    def leave_Module(self, original_node: cst.Module) -> None:
        for site, loss in self.model.losses.loss_sites():
            family = _family(loss.kind)
            if family is None or site.in_test or loss.prediction is None:
                continue
            found = self.model.activations.of(loss.prediction)
            kind = _kind(found)
            if found is None or kind not in _WRONG[family]:
                continue
            fix = _drop_activation(found) if kind in _DROPPABLE.get(family, ()) else None
            self.report(site.call, _message(loss.loss_name, loss.prediction, found, _WRONG[family][kind], _ADVICE[family]), fix)


def _kind(found: Optional[Activation]) -> Optional[str]:
    if found is None:
        return None
    return _TWICE if found.kind == "log_softmax" and found.over is not None else found.kind


def _drop_activation(found: Activation) -> Optional[Fix]:
    if found.inline is None or found.source is None:
        return None  # the activation is elsewhere (a name, a module, a model's forward): only its author can move it
    return Fix("unsafe", f"drop `{_text(found.inline)}` from the loss input", {found.inline: found.source})


def _message(loss_name: str, prediction: cst.BaseExpression, found: Activation, wrong: str, advice: str) -> str:
    what = {"softmax": "softmax output", "log_softmax": "log-softmax output", "sigmoid": "sigmoid output", "logits": "raw linear-layer output"}[found.kind]
    if found.over is not None:
        what = f"log-softmax of a {found.over} output"
    spelled = _text(prediction)
    if found.inline is not None or (found.made_by is prediction and not found.via):
        origin = f"`{spelled}` is a {what}"
    elif found.made_by is prediction:  # what a called function returns
        origin = f"`{spelled}` is a {what} ({found.via})"
    elif found.via and found.via != f"`{spelled}`":
        made = _short(found.shown) if found.shown else _text(found.made_by)
        origin = f"`{spelled}` is a {what} ({found.via} → `{made}`)"
    else:
        origin = f"`{spelled}` is a {what} (`{_text(found.made_by)}`)"
    return f"{origin}, but `{loss_name}` {wrong}; {advice}"


def _text(node: cst.CSTNode) -> str:
    return _short(" ".join(node_code(node).split()))


def _short(code: str) -> str:
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
