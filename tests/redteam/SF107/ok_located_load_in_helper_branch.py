"""Restore chooses where to load per branch: the CPU branch goes through a helper that passes map_location."""
import torch


class CheckpointIO:
    def read_on_host(self, checkpoint_path):
        return torch.load(checkpoint_path, map_location="cpu")


def restore(model, checkpoint_path):
    if torch.cuda.is_available():
        weights = torch.load(checkpoint_path)
    else:
        weights = CheckpointIO().read_on_host(checkpoint_path)
    model.load_state_dict(weights)
