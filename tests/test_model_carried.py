"""The model's `carried` part: state a training loop feeds back into its next iteration."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.traversal import MergedVisitor


def _carried(source: str) -> list[tuple[str, bool]]:
    model = FileModel(("carried",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return [(state.name, state.retain_graph) for state in model.carried.carried()]


LOOP = """
    for x, y in loader:
        {cut}
        out, h = model(x, h)
        loss = crit(out, y)
        loss.backward({retain})
        opt.step()
"""


def test_a_state_re_fed_every_iteration_with_a_backward_in_between_is_carried():
    assert _carried(LOOP.format(cut="pass", retain="")) == [("h", False)]
    assert _carried(LOOP.format(cut="pass", retain="retain_graph=True")) == [("h", True)]


def test_a_detach_or_a_fresh_state_in_the_loop_cuts_it():
    for cut in ("h = h.detach()", "h.detach_()", "h = model.init_hidden(4)", "h = None"):
        assert _carried(LOOP.format(cut=cut, retain="")) == [], cut


def test_a_backward_after_the_loop_is_full_backpropagation_through_time():
    source = """
        for t in range(T):
            h = cell(xs[t], h)
            total = total + crit(h, ys[t])
        total.backward()
    """
    assert _carried(source) == []


def test_self_attributes_are_carried_across_calls_of_a_method_that_runs_backward():
    source = """
        class T:
            def __init__(self):
                self.h = None

            def step(self, x, y):
                out, self.h = self.rnn(x, self.h)
                self.crit(out, y).backward()
    """
    assert _carried(source) == [("self.h", False)]
