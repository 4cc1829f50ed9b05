"""A step with known memory: a 4 MiB temporary per step, and 1 MiB kept per step by History._kept."""

import torch

MIB = 1024 * 1024


class History:
    def __init__(self):
        self._kept = []

    def remember(self, t):
        self._kept.append(t)


def build_verify(device):
    model = torch.nn.Linear(64, 64).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    history = History()
    x = torch.randn(32, 64, device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        tmp = torch.ones(MIB, device=device)  # 4 MiB of float32, freed at the end of the step
        loss = model(x).pow(2).mean() + tmp[0] * 0
        loss.backward()
        opt.step()
        history.remember(torch.zeros(MIB // 4, device=device))  # 1 MiB kept every step
        del tmp
        return loss.detach()

    return model, opt, step
