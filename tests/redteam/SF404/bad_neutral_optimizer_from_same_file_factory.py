"""The optimizer comes from a helper of the file with a neutral name (`setup`), which returns a `torch.optim.AdamW`;
the loop steps it every batch and never clears the gradients (bad)."""
import torch
import torch.nn.functional as F


def setup(net, lr):
    return torch.optim.AdamW(net.parameters(), lr=lr)


def fit(net, loader):
    u = setup(net, 1e-3)
    for x, y in loader:
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        u.step()  # expect: SF404
