"""Near miss: a backward-pass benchmark timed with CUDA events; nothing in the file builds an optimizer or updates a parameter, so the barriers make its timings true rather than slow a training run."""
import torch


def time_backward(make_loss, groups, warmup=3, iters=10):
    for i in range(warmup):
        loss = make_loss(groups[i % len(groups)])
        torch.cuda.synchronize()
        loss.backward()
    total = 0.0
    for i in range(iters):
        loss = make_loss(groups[i % len(groups)])
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        loss.backward()
        stop.record()
        torch.cuda.synchronize()
        total += start.elapsed_time(stop)
    return total / iters
