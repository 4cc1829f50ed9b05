"""Sampled steps (no per-op accounting) count the same live bytes at the step boundaries as exact
steps, and the schedule picks few exact steps (in process, CPU; imports torch)."""

from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")

from stabfix.verify.instrument import Instrumentation, exact_schedule  # noqa: E402


def test_schedule():
    assert exact_schedule(10, 2) == {10}
    assert exact_schedule(8, 2) == {8}
    assert exact_schedule(3, 2) == {3}
    assert exact_schedule(50, 2) == {10, 20, 30, 40, 50}
    assert exact_schedule(25, 10) == {15, 25}
    assert exact_schedule(6, 2, "all") == {1, 2, 3, 4, 5, 6}


class Trainer:
    """Keeps memory in the ways a leaky step does: Python tensors in a list, a view of a larger
    buffer, and an autograd graph (an auxiliary term never backwarded, summed into an attribute)."""

    def __init__(self, kind: str):
        torch.manual_seed(0)
        self.kind = kind
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.x = torch.randn(32, 8)
        self.kept: list = []
        self.total = torch.zeros(())

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        out = self.model(self.x)
        loss = out.pow(2).mean()
        if self.kind == "python":
            self.kept.append(out.detach().clone())
        elif self.kind == "view":
            self.kept.append(torch.ones(1000)[:10])
        elif self.kind == "graph":
            aux = torch.log_softmax(self.model(self.x * 2), dim=-1).mean()  # its graph saves tensors
            self.total = self.total + aux
        elif self.kind == "collect":
            self.kept.append(torch.ones(100))
            gc.collect()  # the user's own collection moves the new objects out of the young generation
        loss.backward()
        self.opt.step()
        return loss.detach()


def _live_ends(kind: str, exact: bool, defer_checks: bool = False) -> list[tuple[int, int]]:
    trainer = Trainer(kind)
    inst = Instrumentation([("", trainer.model)], torch.device("cpu"))
    inst.install()
    try:
        records = [inst.run_step(i, trainer.step, warmup=i == 1, exact=exact, defer_checks=defer_checks and i > 1)
                   for i in range(1, 5)]
    finally:
        inst.remove()
    for r in records:
        assert r["exact"] is exact
        assert (r["peak_bytes"] is None) is (not exact)
    return [(r["start_live_bytes"], r["live_end_bytes"]) for r in records]


@pytest.mark.parametrize("kind", ["healthy", "python", "view", "graph", "collect"])
def test_sampled_steps_count_what_exact_steps_count(kind):
    was_enabled = gc.isenabled()
    sampled = _live_ends(kind, exact=False)
    assert gc.isenabled() == was_enabled
    exact = _live_ends(kind, exact=True)
    assert sampled == exact
    # deferred module checks keep the outputs during the step only: nothing more is alive at its end
    assert _live_ends(kind, exact=False, defer_checks=True) == exact
    growth = [end - start for start, end in exact[1:]]
    if kind == "healthy":
        assert growth == [0, 0, 0]
    else:
        assert all(g > 0 for g in growth)


def test_a_failing_sampled_step_restores_gc():
    def step():
        raise ValueError("bad batch")

    model = torch.nn.Linear(2, 2)
    inst = Instrumentation([("", model)], torch.device("cpu"))
    inst.install()
    was_enabled = gc.isenabled()
    try:
        with pytest.raises(Exception, match="bad batch"):
            inst.run_step(1, step, warmup=False, exact=False)
    finally:
        inst.remove()
    assert gc.isenabled() == was_enabled and not any(getattr(cb, "__name__", "") == "on_gc" for cb in gc.callbacks)


def test_the_sequence_number_read_is_the_next_nodes():
    from stabfix.verify.instrument import _next_sequence_nr

    x = torch.ones(3, requires_grad=True)
    expected = _next_sequence_nr()
    assert (x * 2).grad_fn._sequence_nr() == expected
    assert (x * 3).grad_fn._sequence_nr() == _next_sequence_nr() - 1
