"""Hand-written SGD with momentum buffers in a dict (no torch optimizer exists in the file): the update itself is the training step."""
import torch


class ManualMomentumSGD:
    def __init__(self, params, lr=0.01, momentum=0.9):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.buf = {id(p): torch.zeros_like(p) for p in self.params}

    @torch.no_grad()
    def update(self):
        for p in self.params:
            if p.grad is None:
                continue
            v = self.buf[id(p)]
            v.mul_(self.momentum).add_(p.grad)
            p.sub_(self.lr * v)
            p.grad = None


def train(model, loader, loss_fn):
    sgd = ManualMomentumSGD(model.parameters())
    for x, y in loader:
        loss_fn(model(x), y).backward()
        sgd.update()
