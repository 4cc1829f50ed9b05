"""Mined (detector transfer): checkpoint entries intersected with the model's own state dict, then loaded loosely."""
import torch


def intersect(a, b):
    return {k: v for k, v in a.items() if k in b and v.shape == b[k].shape}


class Detector(torch.nn.Module):
    def load(self, weights):
        csd = weights.float().state_dict()
        updated = intersect(csd, self.state_dict())
        self.load_state_dict(updated, strict=False)
        print(f"transferred {len(updated)}/{len(self.state_dict())} items")
