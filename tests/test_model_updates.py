"""Gradient arithmetic (`model.updates`) and parameter origins (`model.parameters`) of in-place updates."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls.events import ParamUpdate
from stabfix.model.flow.parameters import owned_attribute, parameter_loops
from stabfix.model.flow.updates import direction


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
        ("torch.add(p.data, p.grad, alpha=lr, out=p.data)", 1),
        ("torch.sub(p, -lr * p.grad, out=p)", 1),
        ("torch.add(saved, p.grad, out=p)", None),  # replaces `p` rather than adding to it
    ],
)
def test_direction_of_an_update(statement, expected):
    model, (update,) = _updates(
        f"""
        import torch

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


def _indented(lines: str) -> str:
    """Continuation lines of a statement put into a test function body (12 spaces in these sources)."""
    return lines.replace("\n", "\n" + " " * 12)


@pytest.mark.parametrize(
    "statement,expected",
    [
        ("model.head.weight.data += lr * model.head.weight.grad", 1),
        ("model.head.weight.sub_(model.head.weight.grad, alpha=lr)", -1),
        ("model.head.weight.data += lr * model.head.bias.grad", None),  # another tensor's gradient
        ("torch._foreach_add_(params, grads, alpha=lr)", 1),
        ("torch._foreach_sub_(params, grads)", -1),
        ("torch._foreach_add_(params, unaligned, alpha=lr)", None),  # filtered: element i is not tensor i's
        ("torch._foreach_add_(others, grads, alpha=lr)", None),  # the gradients of another list
        ("torch._foreach_add_(params, params, alpha=lr)", None),
    ],
)
def test_direction_of_attribute_and_multi_tensor_updates(statement, expected):
    model, (update,) = _updates(
        f"""
        import torch

        def probe(model, lr, others):
            params = [p for p in model.parameters() if p.grad is not None]
            grads = [p.grad for p in params]
            unaligned = [p.grad for p in params if p.requires_grad]
            {statement}
        """
    )
    assert direction(update, model.names) == expected


@pytest.mark.parametrize(
    "loop,expected",
    [
        ("for p, g in zip(params, grads):\n    p.add_(g, alpha=lr)", 1),
        ("for p, g in zip(params, grads):\n    p.sub_(g.mul(lr))", -1),
        ("for g, p in zip(grads, params):\n    p.add_(g, alpha=lr)", 1),
        ("for p, g in zip(other, grads):\n    p.add_(g, alpha=lr)", None),
        ("for p, g in zip(params, grads):\n    g = g * 0\n    p.add_(g, alpha=lr)", None),
        ("for name, g in saved.items():\n    by_name[name].add_(g, alpha=lr)", 1),
        ("for name, g in saved.items():\n    by_dict[name].add_(g, alpha=lr)", 1),
        ("for name, g in saved.items():\n    of_other[name].add_(g, alpha=lr)", None),  # another model's
        ("for name, g in saved.items():\n    by_name[key].add_(g, alpha=lr)", None),  # another key
    ],
)
def test_gradients_collected_before_and_added_back_element_by_element(loop, expected):
    model, updates = _updates(
        f"""
        def probe(model, other_model, other, key, lr):
            params = [p for p in model.parameters() if p.requires_grad]
            grads = [p.grad for p in params]
            saved = {{n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}}
            by_name = {{n: p for n, p in model.named_parameters()}}
            by_dict = dict(model.named_parameters())
            of_other = dict(other_model.named_parameters())
            {_indented(loop)}
        """
    )
    assert direction(updates[-1], model.names) == expected


@pytest.mark.parametrize(
    "statement,origin,single,listed",
    [
        ("model.head.weight.data += lr * model.head.weight.grad", set(), True, False),
        ("torch._foreach_add_(params, grads, alpha=lr)", {"model"}, False, True),
        ("by_dict[name].add_(g, alpha=lr)", {"model"}, False, True),
        ("group = opt.param_groups[0]\nfor p in group['params']:\n    p.add_(p.grad)", None, False, False),
    ],
)
def test_where_tensors_without_their_own_loop_come_from(statement, origin, single, listed):
    model, updates = _updates(
        f"""
        import torch

        def probe(model, opt, name, g, lr):
            params = [p for p in model.parameters() if p.grad is not None]
            grads = [p.grad for p in params]
            by_dict = dict(model.named_parameters())
            {_indented(statement)}
        """
    )
    loops = parameter_loops(updates[-1], model.names)
    assert loops is not None and loops.single == single and loops.listed == listed
    if origin is not None:
        assert set(loops.origin.models) == origin
    else:  # the group taken into a local is followed to the optimizer
        assert loops.origin.optimizers == frozenset({"opt"}) and len(loops.chain) == 1


def test_an_attribute_chain_belongs_to_the_models_an_optimizer_was_built_from():
    assert owned_attribute("model.head.weight", {"model"})
    assert owned_attribute("self.model.fc.bias", {"self.model"})
    assert owned_attribute("self.head.weight", {"self"}, frozenset({"self"}))
    assert not owned_attribute("self.delta", {"self"}, frozenset({"self"}))  # a tensor on the trainer, not a layer
    # the instance is whatever the method calls it
    assert not owned_attribute("this.delta", {"this"}, frozenset({"this"}))
    assert owned_attribute("this.head.weight", {"this"}, frozenset({"this"}))
    assert not owned_attribute("self.constraint.log_lambda", {"self.policy"})
    assert not owned_attribute("model.head.weight", {""})
