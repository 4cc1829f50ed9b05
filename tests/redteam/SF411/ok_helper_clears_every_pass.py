"""A trainer method starts every pass with its own `reset_grads()` (a zero_grad in a helper): nothing accumulates across passes."""
import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def reset_grads(self):
        self.opt.zero_grad(set_to_none=True)

    def fit(self, loader, every):
        for i, (x, y) in enumerate(loader):
            self.reset_grads()
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            if (i + 1) % every == 0:
                self.opt.step()
