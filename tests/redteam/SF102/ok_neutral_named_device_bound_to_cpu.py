"""Near miss: the same memo moves each row to `self.dst`, which the class binds to `torch.device("cpu")`:
host memory, whatever the attribute is called."""
import torch


class Memo:
    def __init__(self, enc):
        self.enc = enc
        self.dst = torch.device("cpu")
        self.table = {}

    @torch.no_grad()
    def __call__(self, ids, x):
        out = self.enc(x)
        for i, row in zip(ids, out):
            self.table[i] = row.detach().to(self.dst)
        return out
