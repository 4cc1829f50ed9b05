"""Per-parameter gradient sums allocated on `cache_dev`, a name bound to `"cuda"` three lines above: the word
"cache" in the name does not put the parameter-sized buffers in host memory (bad)."""
import torch


def grad_sums(model, batches):
    cache_dev = "cuda"
    params = [p for p in model.parameters() if p.requires_grad]
    sums = [torch.zeros_like(p, device=cache_dev) for p in params]  # expect: SF105
    for batch in batches:
        model.zero_grad()
        model.loss(batch).backward()
        for s, p in zip(sums, params):
            s.add_(p.grad.detach())
    return sum(s.norm() ** 2 for s in sums)
