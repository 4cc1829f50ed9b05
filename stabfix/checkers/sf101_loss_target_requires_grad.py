"""SF101 loss-target-requires-grad: a loss target is made to require grad and never differentiated.

A query over the model's `loss_targets` part (`domain/loss_targets.py`): each place that makes a tensor require
grad (`t.requires_grad_()`, `requires_grad=True`, `t.requires_grad = True`) whose tensor is then the target of a
loss with nothing reading its gradient (`LossTargets.outcome`), a helper's call that does so to its argument in
place (`marked_by_callees`), the loss's own definition marking the target it receives
(`marked_in_loss_definitions`), and a target a helper returns made to require grad (`returned_requiring_grad`).
Each loss is reported once. The safe fix drops the requires-grad part where the file makes it and the loss is
known not to differentiate its target.
"""

from __future__ import annotations

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.calls.losses import LossOperands
from stabfix.model.domain.loss_targets import GradRequest
from stabfix.model.source.syntax import node_code


class LossTargetRequiresGrad(Checker):
    code = "SF101"
    tokens = ("requires_grad",)
    # the target may be made to require grad by a helper of another scanned file that returns it
    tokens_elsewhere = (".backward(",)
    # every loss the rule recognises is spelled with one of these (`F.mse_loss`, `nn.KLDivLoss`,
    # `criterion`, `loss_fn`, `F.cross_entropy`, `F.kl_div`), or is backpropagated in the file (a loss by its use)
    also_needs = (("loss", "Loss", "criterion", "cross_entropy", "kl_div", ".backward("),)
    needs = ("loss_targets",)

    def leave_Module(self, original_node: cst.Module) -> None:
        targets = self.model.loss_targets
        reported: set[int] = set()
        marked: set[int] = set()  # requests already reported with a loss of their own scope
        for requests in targets.by_scope().values():
            for request in requests:
                outcome = targets.outcome(request)
                if outcome is None:
                    continue
                reported.update(id(loss.call) for loss in outcome.losses)
                marked.add(id(request.node))
                name = request.names[0] if request.names and not request.inline else None
                fix = _fix(request) if outcome.known and not outcome.returned_by else None
                self.report(request.node, _message(request, name, outcome.loss, outcome.known, outcome.returned_by), fix)
        for call, target, loss in targets.marked_by_callees():
            if id(loss.call) in reported:
                continue
            reported.add(id(loss.call))
            self.report(call, (
                f"`{target}` is the target of `{_short(loss)}` but `{_code(call.func)}` makes it require grad, and "
                "nothing reads its gradient; drop the requires_grad part in the helper (no automatic fix: "
                "the helper may have other callers)"
            ))
        for request, loss in targets.marked_in_loss_definitions():
            if id(loss.call) in reported or id(request.node) in marked:
                continue
            reported.add(id(loss.call))
            subject = f"`{request.names[0]}`" if request.names else "this tensor"
            self.report(request.node, (
                f"{subject} is the target `{_short(loss)}` hands in, but the loss makes it require grad "
                f"({request.spelling}) and nothing reads its gradient; drop the requires_grad part (no automatic "
                "fix: the loss may have callers in other files)"
            ))
        for target, loss in targets.returned_requiring_grad():
            if id(loss.call) in reported:
                continue
            reported.add(id(loss.call))
            self.report(target, (
                f"`{target.value}` is the target of `{_short(loss)}` but the function that returns it (in this file or "
                "another scanned file) makes it require grad, and nothing reads its gradient; drop the requires_grad "
                "part where it is made"
            ))


def _code(node: cst.CSTNode) -> str:
    return node_code(node)


def _short(loss: LossOperands) -> str:
    call = _code(loss.call)
    return call if len(call) <= 70 else f"{loss.loss_name}(...)"


def _message(request: GradRequest, name: str | None, loss: LossOperands, known: bool, returned_by: str | None) -> str:
    subject = f"`{name}`" if name else "this tensor"
    message = (
        f"{subject} is the target of `{_short(loss)}` but is made to require grad ({request.spelling}), "
        "and nothing reads its gradient; drop the requires_grad part and keep the detached tensor"
    )
    if returned_by:
        message += f" (no automatic fix: `{returned_by}` returns it and may have callers in other files)"
    elif not known:
        message += f" (no automatic fix: `{loss.loss_name}` is defined elsewhere; make sure it does not differentiate {subject})"
    return message


def _fix(request: GradRequest) -> Fix | None:
    """Drop the requires-grad part: the `requires_grad=True` argument, the `.requires_grad_()` call (keeping its
    receiver), or the whole statement that only sets the flag."""
    node = request.node
    if request.keyword is not None:
        args = list(node.args)  # type: ignore[attr-defined]
        position = args.index(request.keyword)
        args.pop(position)
        if args and position == len(args):
            args[-1] = args[-1].with_changes(comma=request.keyword.comma)
        return Fix("safe", "drop `requires_grad=True`", {node: node.with_changes(args=args)})
    if request.statement is None:
        return Fix("safe", "drop `.requires_grad_()`, keep the tensor", {node: node.func.value})  # type: ignore[attr-defined]
    description = "remove the statement that makes the target require grad"
    line, block = request.line, request.block
    if line is None:
        return None
    if len(line.body) > 1:
        return Fix("safe", description, {request.statement: cst.RemoveFromParent()})
    if block is not None and len(block.body) == 1 and block.body[0] is line:
        return Fix("safe", description, {line: line.with_changes(body=[cst.Pass()])})
    return Fix("safe", description, {line: cst.RemoveFromParent()})
