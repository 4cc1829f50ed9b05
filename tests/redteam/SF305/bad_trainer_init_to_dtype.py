"""A trainer class casts its model with to(dtype=torch.float16) in __init__ and steps it in a method."""
import torch


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model.to(device="cuda", dtype=torch.float16)  # expect: SF305
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model(x.half()), y)
        loss.backward()
        self.opt.step()
        return loss.detach()
