"""Gradient arithmetic (`model.updates`) and parameter origins (`model.parameters`) of in-place updates."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.events import ParamUpdate
from stabfix.model.parameters import parameter_loops
from stabfix.model.updates import direction


def _updates(source: str) -> tuple[FileModel, list[ParamUpdate]]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("events",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(model.visitors())
    return model, [event for event in model.events.events if isinstance(event, ParamUpdate)]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "statement,expected",
    [
        ("p.data.add_(p.grad * lr)", 1),
        ("p.add_(p.grad, alpha=-lr)", -1),
        ("p.sub_(-lr * p.grad)", 1),
        ("p += lr * p.grad", 1),
        ("p.data -= lr * p.grad", -1),
        ("p.data = p.data - p.grad.mul(lr)", -1),
        ("p.add_(lr, p.grad)", 1),  # the legacy (scale, tensor) form
        ("p.add_(g.neg())", -1),  # through the alias `g = p.grad`
        ("p.add_(p.grad, alpha=scale)", -1),  # `scale = -0.5`, a constant followed through its binding
        ("p.add_(p.grad * p.grad)", None),  # sign unknown
        ("p.add_(noise)", None),  # no gradient at all
        ("p.copy_(saved)", None),
    ],
)
def test_direction_of_an_update(statement, expected):
    model, (update,) = _updates(
        f"""
        def probe(p, lr, noise, saved):
            g = p.grad
            scale = -0.5
            {statement}
        """
    )
    assert direction(update, model.names) == expected


def test_a_rebound_alias_is_not_followed():
    model, (update,) = _updates(
        """
        def probe(p, flag):
            g = p.grad
            if flag:
                g = -g
            p.add_(g)
        """
    )
    assert direction(update, model.names) is None


@pytest.mark.parametrize(
    "loop,models,optimizers",
    [
        ("for p in model.parameters():", {"model"}, set()),
        ("for name, p in self.net.named_parameters():", {"self.net"}, set()),
        ("for p, q in zip(encoder.parameters(), other):", {"encoder"}, set()),
        ("for p in trainable:", {"model"}, set()),  # `trainable = [...]` followed through names
    ],
)
def test_where_the_loop_takes_its_parameters(loop, models, optimizers):
    model, (update,) = _updates(
        f"""
        def probe(model, encoder, other, lr):
            trainable = [p for p in model.parameters() if p.requires_grad]
            {loop}
                p.add_(p.grad, alpha=lr)
        """
    )
    loops = parameter_loops(update, model.names)
    assert loops is not None and len(loops.chain) == 1
    assert set(loops.origin.models) == models and set(loops.origin.optimizers) == optimizers


def test_param_group_loops_come_from_the_optimizer_and_other_loops_from_nothing_known():
    model, (from_groups, from_list) = _updates(
        """
        def probe(opt, tensors, lr):
            for group in opt.param_groups:
                for p in group["params"]:
                    p.add_(p.grad, alpha=group["lr"])
            for t in tensors:
                t.add_(t.grad, alpha=lr)
        """
    )
    loops = parameter_loops(from_groups, model.names)
    assert loops is not None and len(loops.chain) == 2 and loops.origin.optimizers == frozenset({"opt"})
    assert parameter_loops(from_list, model.names) is None
