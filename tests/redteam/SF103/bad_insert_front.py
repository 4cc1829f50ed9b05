"""Recent-loss window filled with insert(0, loss) inside the loop."""
import torch.nn.functional as F


def train(model, loader, opt):
    recent = []
    for x, y in loader:
        loss = F.l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        recent.insert(0, loss)  # expect: SF103
        del recent[100:]
