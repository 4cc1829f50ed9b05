"""Entry: reads the learning rate from the settings module, whose import seeds torch."""
import torch

from job import settings

if __name__ == "__main__":
    model = torch.nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=settings.LR)
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
