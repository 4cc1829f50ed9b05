"""The model's `grad_clears` part: `by_a_hook`, a clear that runs when something else calls it."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _model(source: str) -> FileModel:
    model = FileModel(("grad_clears",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model


TRAINS_THROUGH_A_HELPER = """
    def update(opt):
        opt.step()

    def fit(model, opt, loader):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            update(opt)
            model.log(x)
            model.log(x)
            model.log(x)
"""


def test_a_clear_in_a_function_that_steps_through_a_helper_is_no_hook():
    assert _model(TRAINS_THROUGH_A_HELPER).grad_clears.by_a_hook() is False


def test_a_clear_in_a_function_that_steps_nothing_and_is_never_called_is_a_hook():
    source = TRAINS_THROUGH_A_HELPER.replace("            update(opt)\n", "")
    assert _model(source).grad_clears.by_a_hook() is True


def test_whether_a_function_steps_is_asked_of_its_calls_once():
    # `by_a_hook` asks it for every event of the function: each call's effects are looked up once, not per event
    model = _model(TRAINS_THROUGH_A_HELPER)
    asked: list[int] = []
    effects_at = model.summaries.effects_at
    model.summaries.effects_at = lambda call: asked.append(id(call)) or effects_at(call)
    assert model.grad_clears.by_a_hook() is False
    # each call of `fit` once for whether `fit` steps, once more for what it clears through its summary (at most)
    assert max(asked.count(call) for call in asked) <= 2
