"""A running loss sum fed back through `torch.add` is a statistic (SF103's concern), not recurrent state."""
import torch


def train(model, loader, opt, crit):
    total = torch.zeros(())
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = torch.add(total, loss.detach())
