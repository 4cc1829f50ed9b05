"""Every move is assigned or returned."""
import torch


def prepare(x, y, device):
    x = x.to(device, non_blocking=True)
    y = torch.as_tensor(y).cuda()
    return x, y.float()
