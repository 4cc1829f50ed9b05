"""Embeddings memoised per id after a move to `self.offload_target`, which the class binds to `torch.device("cuda", 0)`:
the word "offload" in the name does not put the tensors in host memory (bad)."""
import torch


class Memo:
    def __init__(self, enc):
        self.enc = enc
        self.offload_target = torch.device("cuda", 0)
        self.table = {}

    @torch.no_grad()
    def __call__(self, ids, x):
        out = self.enc(x)
        for i, row in zip(ids, out):
            self.table[i] = row.detach().to(self.offload_target)  # expect: SF102
        return out
