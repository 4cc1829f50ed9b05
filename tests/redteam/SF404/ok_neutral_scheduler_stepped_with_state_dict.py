"""Near miss: besides the optimizer (cleared every batch), a neutral-named object `k` is stepped with no argument and
saved with `state_dict()`: a learning-rate scheduler does both, so neither makes it an optimizer that needs clearing."""
import torch
import torch.nn.functional as F


def fit(net, k, loader, path):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        k.step()
    torch.save(k.state_dict(), path)
