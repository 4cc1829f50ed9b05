"""`torch.from_numpy` has no `device=`: converting then moving is the only way."""
import numpy as np
import torch


def train(model, arrays, optimizer):
    for arr, target in arrays:
        x = torch.from_numpy(np.ascontiguousarray(arr)).cuda()
        loss = (model(x) - target).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
