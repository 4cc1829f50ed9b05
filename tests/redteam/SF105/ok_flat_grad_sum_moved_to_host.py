"""Near miss of bad_mined_flat_sum_from_zero_line_samples: the flat gradient of each sample is moved to the CPU
before it is added, so the sum that starts as `0` lives in host memory (silent)."""
import torch


def summed_gradient(model, criterion, batches):
    total = 0
    for x, y in batches:
        model.zero_grad()
        criterion(model(x), y).backward()
        total += torch.cat([p.grad.detach().view(-1) for p in model.parameters()]).cpu()
    return total.norm().item()
