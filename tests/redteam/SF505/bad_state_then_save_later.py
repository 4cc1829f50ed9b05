"""The state dict is taken into a name in one statement and saved at the end of the function."""
import torch
import torch.nn as nn


def best_checkpoint(model, scores, path):
    model = nn.parallel.DistributedDataParallel(model)
    best = None
    for score in scores:
        if best is None or score > best[0]:
            best = (score, model.state_dict())  # expect: SF505
    torch.save(best, path)
