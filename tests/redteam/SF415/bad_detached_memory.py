"""Transformer-XL-like memory: the detached memory is the only input of a checkpointed layer."""
from torch.utils import checkpoint as cp


class Memory:
    def __init__(self, layer):
        self.layer = layer

    def refresh(self, hidden):
        mem = hidden.detach()
        return cp.checkpoint(self.layer, mem)  # expect: SF415
