"""Mined (LoRA loader that also swaps norm layers): a helper copies the layers it is about to overwrite out of the
live module's own state dict and returns that copy; the pipeline keeps it on the module and later loads it back
loosely. Every key was picked by the code from the module itself, so nothing can be missing."""
import torch.nn as nn


class NormSwapMixin:
    @classmethod
    def _swap_norms(cls, state_dict, network):
        current = network.state_dict()
        saved = {}
        for key in state_dict:
            saved[key] = current[key].clone()
        outcome = network.load_state_dict(state_dict, strict=False)
        if outcome.unexpected_keys:
            raise ValueError(f"not norm layers: {outcome.unexpected_keys}")
        return saved

    def load_norms(self, state_dict):
        network = self.backbone
        network._replaced_norms = self._swap_norms(state_dict, network)

    def unload_norms(self):
        network = self.backbone
        if getattr(network, "_replaced_norms", None):
            network.load_state_dict(network._replaced_norms, strict=False)
            network._replaced_norms = None


class Pipeline(NormSwapMixin):
    def __init__(self, width):
        self.backbone = nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width))
