"""An optimizer handed in under a neutral name (`u`): its learning rate is set through `param_groups` and it steps every
batch, but nothing clears the gradients, so they add up across batches (bad)."""
import torch.nn.functional as F


def fit(net, u, loader, lr_at):
    for i, (x, y) in enumerate(loader):
        for group in u.param_groups:
            group["lr"] = lr_at(i)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        u.step()  # expect: SF404
