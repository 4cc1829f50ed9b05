"""Embedding cache with save/load: the loader restores it with torch.load(path) and no map_location, onto whatever device it was saved from (bad)."""
import os

import torch


class EmbeddingCache:
    def __init__(self, encoder, path):
        self.encoder = encoder
        self.path = path
        self.store = {}
        if os.path.exists(path):
            self.store = torch.load(path)  # expect: SF102

    @torch.no_grad()
    def get(self, key, tokens):
        if key not in self.store:
            self.store[key] = self.encoder(tokens).squeeze(0)  # expect: SF102
        return self.store[key]

    def save(self):
        torch.save(self.store, self.path)
