"""Parameter-sized allocations (`model.parameters`) and the accumulators summed into them (`model.accumulators`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.domain.accumulators import accumulators
from stabfix.model.flow.parameters import param_sized_allocation


def _model(source: str) -> tuple[FileModel, cst.Module]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("events", "names"))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(model.visitors())
    return model, module


def _allocation(expression: str, loop: str = "for p in model.parameters():"):
    model, module = _model(f"import torch\n{loop}\n    x = {expression}\n")
    assign = module.body[1].body.body[0].body[0]  # type: ignore[attr-defined]
    return param_sized_allocation(assign.value, model.names)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "expression",
    ["torch.zeros_like(p)", "torch.empty_like(p).zero_()", "torch.full_like(p, 0.0)", "p.new_zeros(p.shape)",
     "p.data.new(p.size()).zero_()", "torch.zeros(p.shape, device=p.device)", "torch.zeros_like(p.grad)"],
)
def test_buffers_shaped_like_a_parameter_are_param_sized(expression):
    found = _allocation(expression)
    assert found is not None and found.origin.models == frozenset({"model"}) and not found.on_host


@pytest.mark.parametrize("expression", ["p.detach().clone()", "torch.zeros(10)", "torch.zeros_like(x)", "p.new_zeros(10)"])
def test_copies_and_other_shapes_are_not_param_sized(expression):
    assert _allocation(expression) is None


def test_host_allocation_is_known():
    assert _allocation('torch.zeros_like(p, device="cpu")').on_host
    assert _allocation("torch.zeros_like(p).cpu()").on_host


def test_named_parameters_give_the_tensor_element():
    assert _allocation("torch.zeros_like(p)", "for n, p in model.named_parameters():") is not None


SUMS = """
import torch

def probe(model, batches):
    params = [p for p in model.parameters()]
    xs = [torch.zeros_like(p) for p in params]
    ys = [torch.zeros_like(p) for p in params]
    for b in batches:
        model.loss(b).backward()
        for acc, p in zip(xs, params):
            acc.add_(p.grad)
    for b in batches:
        model.loss(b).backward()
        for acc, p in zip(ys, params):
            acc.add_(p.grad)
    return sum((x * y).sum() for x, y in zip(xs, ys))
"""


def test_two_sums_with_reused_loop_names_are_told_apart():
    model, _ = _model(SUMS)
    found = accumulators(model.events, model.names)  # type: ignore[arg-type]
    assert [acc.name for acc in found] == ["xs", "ys"]
    xs, ys = found
    assert len(xs.adds) == len(ys.adds) == 1 and xs.passes and ys.passes
    assert not (xs.escapes or xs.decayed or xs.written_back or xs.foreign_read)
    assert xs.partners == {id(ys.holder)} and ys.partners == {id(xs.holder)}


@pytest.mark.parametrize(
    "extra,flag",
    [
        ("        for acc in xs:\n            acc.mul_(0.9)\n", "decayed"),
        ("        for acc, p in zip(xs, params):\n            p.grad.copy_(acc)\n", "written_back"),
        ("    self.kept = xs\n", "escapes"),
        ("    torch.dot(xs[0].flatten(), ref)\n", "foreign_read"),
        ("    torch.dot(xs, ref)\n", "foreign_read"),
    ],
)
def test_what_else_the_function_does_with_the_sums(extra, flag):
    source = SUMS.replace("    return sum", extra + "    return sum") if not extra.startswith("        ") else SUMS.replace(
        "            acc.add_(p.grad)\n    for b", "            acc.add_(p.grad)\n" + extra + "    for b", 1
    )
    model, _ = _model(source)
    xs = accumulators(model.events, model.names)[0]  # type: ignore[arg-type]
    assert getattr(xs, flag)


def test_a_single_pass_is_not_a_sum_over_passes():
    model, _ = _model(
        """
        import torch
        def once(model, params):
            gs = [torch.zeros_like(p) for p in params]
            for g, p in zip(gs, params):
                g.add_(p.grad)
            return gs
        """
    )
    (gs,) = accumulators(model.events, model.names)  # type: ignore[arg-type]
    assert gs.passes == [] and gs.escapes


RETURNED = """
import torch

def task_grads(model, loader):
    sums = [torch.zeros_like(p) for p in model.parameters()]
    for b in loader:
        model.loss(b).backward()
        for s, p in zip(sums, model.parameters()):
            s.add_(p.grad)
    return sums
"""


@pytest.mark.parametrize(
    "caller,escapes",
    [
        ("", True),  # no caller in the file: its consumer is unknown
        ("def use(m, dl):\n    return sum(g.sum() for g in task_grads(m, dl))\n", False),
        ("class K:\n    def keep(self, m, dl):\n        self.grads = task_grads(m, dl)\n", True),
    ],
)
def test_returned_sums_count_as_read_only_when_every_caller_only_reads_them(caller, escapes):
    model, _ = _model(RETURNED + "\n" + caller)
    (sums,) = accumulators(model.events, model.names)  # type: ignore[arg-type]
    assert sums.returned and sums.escapes is escapes


GROWN = """
import torch
def probe(model, batches):
    total = {start}
    for x in batches:
        model(x).sum().backward()
        total += {term}
    return total.norm().item()
"""


@pytest.mark.parametrize(
    "start,term,grown",
    [
        ("0", "torch.cat([p.grad.view(-1) for p in model.parameters()])", True),
        ("None", "torch.cat([p.grad.data.flatten() for p in model.parameters() if p.grad is not None])", True),
        ("0", "torch.cat([p.view(-1) for p in model.parameters()])", False),  # the weights, not their gradients
        ("0", "torch.cat([g.view(-1) for g in other])", False),  # not drawn from a model's parameters
        ("torch.ones(3)", "torch.cat([p.grad.view(-1) for p in model.parameters()])", False),  # not an empty start
        # added into a fresh tensor: an in-place add keeps the receiver's shape, so it holds all the gradients
        ("torch.zeros(n)", "torch.cat([g.reshape(-1) for g in torch.autograd.grad(x.sum(), model.parameters())])", True),
        ('torch.zeros(n, device="cpu")', "torch.cat([p.grad.view(-1) for p in model.parameters()]).cpu()", False),
        ("None", "torch.cat([g.reshape(-1) for g in torch.autograd.grad(x.sum(), [x])])", False),  # an input's gradient
    ],
)
def test_a_sum_grown_from_nothing_by_flat_gradients_is_parameter_sized(start, term, grown):
    model, _ = _model(GROWN.format(start=start, term=term))
    found = accumulators(model.events, model.names)  # type: ignore[arg-type]
    assert [acc.grown for acc in found] == ([True] if grown else [])
    if grown:
        assert found[0].passes and not found[0].allocation.on_host and found[0].allocation.origin.models == frozenset({"model"})


def test_a_call_through_a_local_bound_to_functions_of_the_file_counts_as_a_caller():
    source = RETURNED + textwrap.dedent("""
        def other(m, dl):
            return []
        def use(m, dl, flag):
            if flag:
                score = task_grads
            else:
                score = other
            sums = score(m, dl)
            return sum(g.sum() for g in sums)
        """)
    model, _ = _model(source)
    (sums,) = accumulators(model.events, model.names)  # type: ignore[arg-type]
    assert sums.returned and not sums.escapes
