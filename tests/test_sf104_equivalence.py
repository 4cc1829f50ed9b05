"""SF104's fix claims "same values": `x.gather(d, i) - x.logsumexp(d, keepdim=True)` equals
`x.log_softmax(d).gather(d, i)` in value, dtype and gradient, on random inputs."""

from __future__ import annotations

import pytest
import torch

DTYPES = [torch.float64, torch.float32, torch.bfloat16, torch.float16]
# both forms round in the logits' dtype: they may differ by a few units in the last place (measured: at
# most 4 ulps in value, relative to max(|log-prob|, 1), and in gradient, which is at most 1 in size)
ULPS = 8
SHAPES = [((4, 10), -1), ((2, 7, 33), -1), ((3, 5, 1000), 2), ((6, 17), 1)]


def _both(logits: torch.Tensor, index: torch.Tensor, dim: int):
    results = []
    for form in ("log_softmax", "fused"):
        x = logits.detach().clone().requires_grad_(True)
        if form == "log_softmax":
            picked = torch.log_softmax(x, dim=dim).gather(dim, index)
        else:
            picked = x.gather(dim, index) - x.logsumexp(dim, keepdim=True)
        weights = torch.linspace(-1.0, 1.0, picked.numel(), dtype=torch.float64).view_as(picked).to(picked.dtype)
        (picked * weights).sum().backward()
        results.append((picked.detach(), x.grad))
    return results


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", SHAPES, ids=str)
def test_fused_gather_equals_log_softmax_gather(dtype, shape, dim):
    generator = torch.Generator().manual_seed(hash((shape, dim)) % 1000)
    logits = (torch.randn(shape, generator=generator, dtype=torch.float64) * 4).to(dtype)
    index_shape = list(shape)
    index_shape[dim] = 1
    index = torch.randint(0, shape[dim], index_shape, generator=generator)
    (reference, reference_grad), (fused, fused_grad) = _both(logits, index, dim)
    assert fused.dtype == reference.dtype == dtype
    assert fused.shape == reference.shape
    tolerance = ULPS * torch.finfo(dtype).eps
    scale = reference.double().abs().clamp_min(1.0)
    assert ((fused.double() - reference.double()).abs() / scale).max() <= tolerance
    assert (fused_grad.double() - reference_grad.double()).abs().max() <= tolerance
