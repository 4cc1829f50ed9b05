"""The model's `history` part: which expressions still carry autograd history, and what uses a graph later."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.flow.history import LOSS, MODEL_OUTPUT
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> tuple[cst.Module, FileModel]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("history",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return module, model


def _appended(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """The argument of every `<list>.append(...)` call, by its source text."""
    found: dict[str, cst.BaseExpression] = {}

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "append":
                found[module.code_for_node(node.args[0].value)] = node.args[0].value

    module.visit(_Finder())
    return found


SOURCE = """
    import torch
    import torch.nn.functional as F

    def train(model, loader, opt, log):
        model.train()
        for x, y in loader:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            log.append(loss)
            log.append(loss * 2)
            log.append(loss.item())
            log.append(loss.detach())
            log.append(float(loss))
            log.append(logits)
            log.append(logits.argmax(-1))
            log.append((logits == y).sum())
            with torch.no_grad():
                log.append(model(x))
"""


def test_losses_and_forwards_carry_history_cut_values_do_not():
    module, model = _model(SOURCE)
    history = model.history
    values = _appended(module)
    assert history.origin(values["loss"]) == LOSS
    assert history.origin(values["loss * 2"]) == LOSS
    assert history.origin(values["logits"]) == MODEL_OUTPUT  # the prediction of a loss
    for cut in ("loss.item()", "loss.detach()", "float(loss)", "logits.argmax(-1)", "(logits == y).sum()", "model(x)"):
        assert history.origin(values[cut]) is None, cut


def test_an_accumulated_loss_that_is_backpropagated_feeds_backward():
    _, model = _model(
        """
        def train(model, loader, opt, criterion, accum):
            total = 0.0
            logged = 0.0
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                total += loss / accum
                logged += loss
                if (i + 1) % accum == 0:
                    scaled = total * 1.0
                    scaled.backward()
                    opt.step()
                    total = 0.0
        """
    )
    function = next(node for node in model.names.scopes if isinstance(node, cst.FunctionDef))
    assert model.history.feeds_backward({"total"}, function)  # through `scaled = total * 1.0`
    assert not model.history.feeds_backward({"logged"}, function)


def test_a_sum_returned_by_a_function_feeds_its_return():
    _, model = _model(
        """
        def compute_loss(heads, x, ys, criterion):
            total = 0.0
            for head, y in zip(heads, ys):
                total += criterion(head(x), y)
            return total / len(ys)
        """
    )
    function = next(node for node in model.names.scopes if isinstance(node, cst.FunctionDef))
    assert model.history.feeds_return({"total"}, function)
    assert not model.history.feeds_return({"criterion_total"}, function)
