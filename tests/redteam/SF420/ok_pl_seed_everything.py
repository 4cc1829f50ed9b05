"""pytorch_lightning's seed_everything imported by name."""
import torch
from pytorch_lightning import seed_everything

if __name__ == "__main__":
    seed_everything(0, workers=True)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in data:
        opt.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        opt.step()
