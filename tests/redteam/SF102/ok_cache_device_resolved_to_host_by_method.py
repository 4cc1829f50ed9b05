"""Embeddings cached per key on a device a method resolves, which is always the host (correct)."""
import torch


class Cache:
    def __init__(self, encoder, offload=True):
        self.encoder = encoder
        self.items = {}

    def _keep_on(self):
        return torch.device("cpu")

    @torch.no_grad()
    def get(self, key, x):
        if key not in self.items:
            self.items[key] = self.encoder(x).detach().to(self._keep_on(), non_blocking=True)
        return self.items[key]
