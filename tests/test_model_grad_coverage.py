"""Which parameters an optimizer covers, and whether a gradient clear reaches them (`grad_coverage`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.calls.events import ClearGrad, Step, stepped_optimizer
from stabfix.model.flow.grad_coverage import GradCoverage, owners
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.traversal import MergedVisitor


def _clears_reaching(source: str) -> dict[str, list[str]]:
    """For every stepped optimizer (by how the step spells it), the clears of the file that may reach it."""
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("optimizers", "events"))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    built = [e.node for e in model.events.of_kind("optimizer")]
    coverage = GradCoverage(model.optimizers, model.names, built)
    answer: dict[str, list[str]] = {}
    for step in model.events.of_kind("step"):
        assert isinstance(step, Step)
        stepped = stepped_optimizer(step, model.optimizers, model.events)
        assert stepped is not None
        constructor = stepped[1].constructor
        answer[dotted_name(stepped[0]) or ""] = [
            cst.Module(body=[]).code_for_node(clear.node)
            for clear in model.events.of_kind("clear")
            if isinstance(clear, ClearGrad) and coverage.may_clear(clear.receiver, clear.how, clear.site.scope, constructor)
        ]
    return answer


_GAN = """
    import torch
    G, D = Generator(), Discriminator()
    opt_g = torch.optim.Adam(G.parameters())
    opt_d = torch.optim.Adam(D.parameters())
    for real in loader:
        {clears}
        d_loss.backward()
        opt_d.step()
        g_loss.backward()
        opt_g.step()
"""


@pytest.mark.parametrize(
    "clears, reaching_d",
    [
        ("opt_g.zero_grad()", []),  # G's optimizer clears only G's parameters
        ("G.zero_grad()", []),  # so does G itself, a model another optimizer trains
        ("opt_g.zero_grad(); opt_d.zero_grad()", ["opt_d.zero_grad()"]),
        ("D.zero_grad()", ["D.zero_grad()"]),
        ("for p in D.parameters(): p.grad = None", ["p.grad = None"]),  # unknown reach: may clear anything
        ("helper.zero_grad()", ["helper.zero_grad()"]),  # not shown to be a model of the file
    ],
)
def test_a_clear_of_another_optimizer_or_model_does_not_reach_disjoint_parameters(clears, reaching_d):
    assert _clears_reaching(_GAN.replace("{clears}", clears))["opt_d"] == reaching_d


def test_shared_or_nested_models_and_unknown_parameters_are_never_proof_of_disjointness():
    nested = """
        import torch
        opt_all = torch.optim.SGD(model.parameters(), lr=0.1)
        opt_head = torch.optim.Adam(model.head.parameters())
        opt_all.zero_grad()
        loss.backward()
        opt_head.step()
    """
    assert _clears_reaching(nested)["opt_head"] == ["opt_all.zero_grad()"]
    aliased = """
        import torch
        D = G.discriminator
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        opt_g.zero_grad()
        loss.backward()
        opt_d.step()
    """
    assert _clears_reaching(aliased)["opt_d"] == ["opt_g.zero_grad()"]  # `D` is a part of `G`
    held_list = """
        import torch
        opt_g = torch.optim.Adam(params)
        opt_d = torch.optim.Adam(D.parameters())
        opt_g.zero_grad()
        loss.backward()
        opt_d.step()
    """
    assert _clears_reaching(held_list)["opt_d"] == ["opt_g.zero_grad()"]  # what `params` holds is unknown
    whole = """
        import torch
        opt_g = torch.optim.Adam(model.G.parameters())
        opt_d = torch.optim.Adam(model.D.parameters())
        model.zero_grad()
        loss.backward()
        opt_d.step()
    """
    assert _clears_reaching(whole)["opt_d"] == ["model.zero_grad()"]  # the whole model holds both


@pytest.mark.parametrize(
    "params, models",
    [
        ("G.parameters()", ["G"]),
        ("list(enc.parameters()) + list(dec.parameters())", ["enc", "dec"]),
        ("itertools.chain(self.a.parameters(), self.b.parameters())", ["self.a", "self.b"]),
        ('[{"params": net.body.parameters(), "lr": lr}]', ["net.body"]),
        ("filter(lambda p: p.requires_grad, model.parameters())", ["model"]),
        ("[p for p in model.parameters() if p.requires_grad]", ["model"]),
        ("params", None),
        ("list(G.parameters()) + [z]", None),  # `z` is a tensor of its own
        ("build_groups(model)", None),
    ],
)
def test_the_models_an_optimizer_is_built_over(params, models):
    call = cst.parse_expression(f"torch.optim.Adam({params}, lr=1e-3)")
    assert isinstance(call, cst.Call)
    found = owners(call)
    assert (None if found is None else [dotted_name(m) for m in found]) == models


@pytest.mark.parametrize(
    "body, reach",
    [
        ("logits = model(x)\n    loss = logits.sum()", {"model"}),
        ("loss = model.forward(x).mean(dim=1).sum() * 0.5", {"model"}),
        ("net = torch.nn.Linear(4, 2)\n    loss = net(x).sum() + model(x).sum()", {"net", "model"}),
        ("loss = F.cross_entropy(model(x), y)", None),  # a loss function of a target: not shown
        ("loss = model(x).sum() + extra", None),  # a parameter may carry history of its own
        ("loss = helper(x).sum()", None),  # a function of the file, not a module
        ("loss = model(x).sum()\n    if flag:\n        loss = other(x)", None),  # `other` is a global unknown
    ],
)
def test_the_models_a_backward_gives_gradients_to(body, reach):
    from stabfix.model.flow.grad_coverage import backward_reach

    source = (
        "import torch\nimport torch.nn.functional as F\n\n\ndef helper(x):\n    return x\n\n\n"
        f"def run(model, x, y, extra, flag):\n    {body}\n    loss.backward()\n"
    )
    module = cst.parse_module(source)
    model = FileModel(needs=("events",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    (backward,) = model.events.of_kind("backward")
    found = backward_reach(backward.loss, model.names, model.names.qualify)
    assert found == (frozenset(reach) if reach is not None else None)
