"""The model's `carried` part: state a training loop feeds back into its next iteration."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


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


def _states(source: str):
    model = FileModel(("carried",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    return model.carried.carried()


def test_every_element_of_a_tuple_state_detached_in_place_cuts_it():
    for cut in (
        "h[0].detach_(); h[1].detach_()",
        "[t.detach_() for t in h]",
        "for t in h: t.detach_()",
        "for i in range(len(h)): h[i].detach_()",
    ):
        assert _carried(LOOP.format(cut=cut, retain="")) == [], cut


def test_one_element_detached_in_place_leaves_the_rest_carried():
    assert _carried(LOOP.format(cut="h[0].detach_()", retain="")) == [("h", False)]
    # a three-tensor state built in the file needs all three
    three = "h = (a, b, c)\n" + textwrap.dedent(LOOP.format(cut="h[0].detach_(); h[1].detach_()", retain=""))
    assert _carried(three) == [("h", False)]


def test_a_state_shown_to_be_a_tuple_or_list_is_a_sequence():
    shown = {
        "h = (h0, c0)": True,
        "h = [torch.zeros(2), torch.zeros(2)]": True,
        "h = init_state()": True,  # a function of the file that returns a tuple
        "h = torch.zeros(2)": False,
        "h = model.init_hidden(4)": False,  # not shown
    }
    for start, expected in shown.items():
        source = f"""
            def init_state():
                return torch.zeros(1), torch.zeros(1)

            def fit(model, loader, crit, opt, h0, c0):
                {start}
                for x, y in loader:
                    out, h = model(x, h)
                    crit(out, y).backward()
        """
        assert [s.is_sequence for s in _states(source)] == [expected], start


def test_an_lstm_state_or_an_unpacked_one_is_a_sequence():
    lstm = """
        import torch

        def fit(loader, crit, h):
            rnn = torch.nn.LSTM(4, 8)
            for x, y in loader:
                out, h = rnn(x, h)
                crit(out, y).backward()
    """
    unpacked = """
        def fit(model, loader, crit, h):
            for x, y in loader:
                out, h = model(x, h)
                crit(out, y).backward()
                a, b = h
    """
    assert [s.is_sequence for s in _states(lstm)] == [True]
    assert [s.is_sequence for s in _states(unpacked)] == [True]


HELPERS = """
class Steps:
    def run(self, state):
        state.detach_()

def cut_whole(state):
    state.detach_()

def cut_element(state, k):
    state[k].detach_()

def cut_first(state):
    state[0].detach_()

def detached(h):
    return h.detach()

def keep(state):
    return state.sum()
"""


def test_a_helper_that_detaches_the_state_in_place_cuts_it():
    for cut in (
        "cut_whole(h)",
        "Steps().run(h)",
        "for t in h: cut_whole(t)",
        "for k in range(len(h)): cut_element(h, k)",
        "cut_first(h); h[1].detach_()",
        "h = detached(h)",
    ):
        assert _carried(HELPERS + textwrap.dedent(LOOP.format(cut=cut, retain=""))) == [], cut


def test_a_helper_that_does_not_detach_or_detaches_one_element_leaves_it_carried():
    for cut in ("keep(h)", "cut_first(h)", "cut_whole(x)"):
        assert _carried(HELPERS + textwrap.dedent(LOOP.format(cut=cut, retain=""))) == [("h", False)], cut


def test_a_helper_that_re_binds_the_attribute_detached_cuts_a_state_kept_on_self():
    source = """
    def cut(trainer):
        trainer.h = trainer.h.detach()

    class Trainer:
        def step(self, x, y):
            out, self.h = self.rnn(x, self.h)
            self.crit(out, y).backward()
            self.opt.step()
            cut(self)
    """
    assert _carried(source) == []
    assert _carried(source.replace("trainer.h.detach()", "trainer.h * 1")) == [("self.h", False)]
