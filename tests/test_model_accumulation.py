"""The model's `accumulation` part: hand-written gradient accumulation and how the loss is scaled."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> FileModel:
    model = FileModel(("accumulation",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


LOOP = """
    import torch
    opt = torch.optim.AdamW(model.parameters())
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        {scaling}
        {backward}
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
"""


def test_a_backward_every_iteration_with_a_step_behind_a_modulo_is_accumulation():
    model = _model(LOOP.format(scaling="pass", backward="loss.backward()"))
    [found] = model.accumulation.loops()
    assert _code(found.every) == "accum" and _code(found.loss) == "loss"
    assert model.accumulation.is_plain_loss(found.loss)
    assert model.accumulation.divisors(found.loss) == []


def test_divisions_are_followed_through_bindings_in_place_updates_and_the_scaler():
    for scaling, backward in [
        ("loss = loss / accum", "loss.backward()"),
        ("loss /= accum", "loss.backward()"),
        ("pass", "scaler.scale(loss / accum).backward()"),
    ]:
        model = _model(LOOP.format(scaling=scaling, backward=backward))
        [found] = model.accumulation.loops()
        assert [_code(d) for d in model.accumulation.divisors(found.loss)] == ["accum"], (scaling, backward)


def test_a_step_on_every_iteration_is_not_accumulation():
    source = """
        import torch
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            if i % 10 == 0:
                opt.step()
    """
    assert _model(source).accumulation.loops() == []


def test_libraries_that_scale_the_loss_themselves_are_not_accumulation_by_hand():
    source = """
        for i, batch in enumerate(loader):
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                loss.backward()
                if i % 4 == 0:
                    optimizer.step()
    """
    assert _model(source).accumulation.loops() == []


def test_a_user_loss_of_another_module_is_not_shown_to_be_unscaled():
    model = _model(LOOP.format(scaling="loss = project_loss(model, x, y)", backward="loss.backward()"))
    [found] = model.accumulation.loops()
    assert not model.accumulation.is_plain_loss(found.loss)
