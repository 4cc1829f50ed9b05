"""The model's `cuts` part: copies cut from the autograd graph and made to require grad again."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> FileModel:
    model = FileModel(("cuts",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def _copied(source: str) -> list[str]:
    return [cst.Module(body=[]).code_for_node(cut.copied) for cut in _model(source).cuts.cuts]


@pytest.mark.parametrize(
    "line, copied",
    [
        ("y = out.detach().requires_grad_()", ["out"]),
        ("y = out.clone().detach().requires_grad_(True)", ["out"]),
        ("y = out.data.requires_grad_()", ["out"]),
        ("from torch.autograd import Variable\ny = Variable(out.data, requires_grad=True)", ["out"]),
        ("import torch\ny = torch.tensor(loss.item(), requires_grad=True)", ["loss"]),
        ("import torch\ny = torch.from_numpy(f(out.detach().numpy())).requires_grad_()", ["f(out.detach().numpy())"]),
    ],
)
def test_a_re_leafing_copy_is_recorded_with_what_it_copies(line, copied):
    assert _copied(line) == copied


@pytest.mark.parametrize(
    "line",
    [
        "y = out.requires_grad_()",
        "y = out.clone().requires_grad_()",
        "y = out.detach().requires_grad_(False)",
        "from torch.autograd import Variable\ny = Variable(out, requires_grad=True)",
    ],
)
def test_copies_that_keep_the_graph_or_do_not_require_grad_are_not_cuts(line):
    assert _copied(line) == []


def test_names_computed_from_the_copy_by_tensor_math_only():
    model = _model(
        """
        def f(policy, head, s, ret):
            logp = policy(s).detach().requires_grad_()
            loss = -(logp * ret).mean()
            out = head(logp)
            return loss, out
        """
    )
    [cut] = model.cuts.cuts
    assert model.cuts.computed_from(cut) == {"logp", "loss"}


@pytest.mark.parametrize(
    "line, copied",
    [
        ("y = out.detach().view(-1).requires_grad_()", ["out"]),
        ("y = out.detach().to(device).requires_grad_()", ["out"]),
        ("y = out.data[:, 0].requires_grad_()", ["out"]),
        ("from torch.autograd import Variable\ny = Variable(out.detach().view(-1).cuda(), requires_grad=True)", ["out"]),
    ],
)
def test_a_cut_is_seen_through_views_moves_and_indexing(line, copied):
    assert _copied(line) == copied


def test_a_cut_in_a_tuple_display_binds_the_name_its_element_is_unpacked_into():
    model = _model(
        """
        from torch.autograd import Variable
        p, q = Variable(a.data, requires_grad=True), h
        """
    )
    [cut] = model.cuts.cuts
    assert cut.bound == ("p",)
