"""A pytest test that compares eval-mode outputs across batch sizes (it asserts)."""
import torch


def test_eval_outputs_are_batch_independent(model):
    model.eval()
    xs = [torch.randn(2, 4) for _ in range(3)]
    outs = [model(x) for x in xs]
    assert all(o.shape == (2, 1) for o in outs)
