"""verify names who holds tensors that only an autograd graph keeps alive (SF103's runtime effect)."""

from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")

from stabfix.verify.holders import find_holders  # noqa: E402


class Logger:
    def __init__(self) -> None:
        self.running_nll = 0.0


def test_a_saved_tensor_is_held_by_the_graph_of_a_named_sum():
    logger = Logger()
    weight = torch.randn(8, 5, requires_grad=True)
    keys = set()
    for _ in range(3):
        log_probs = (torch.randn(4, 8) @ weight).log_softmax(-1)
        keys.add(id(log_probs.untyped_storage()))
        logger.running_nll += torch.nn.functional.nll_loss(log_probs, torch.tensor([0, 1, 2, 3]))
        del log_probs
    gc.collect()
    found = find_holders({"log_softmax": keys})
    assert found["log_softmax"]["holders"] == ["Logger.running_nll (autograd graph)"]
