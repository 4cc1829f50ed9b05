"""Known memory per step: a 4 MiB temporary (freed in the step) and 1 MiB kept every step in
History._kept (through two views of one storage). The model and batch are tiny (under 3 KiB) so the
known sizes dominate."""

import torch

MIB = 1024 * 1024


class History:
    def __init__(self):
        self._kept = []

    def remember(self, t):
        self._kept.append(t)


def build_verify(device):
    model = torch.nn.Linear(16, 16).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    history = History()
    x = torch.randn(8, 16, device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        tmp = torch.ones(MIB, device=device)  # 4 MiB of float32, alive until the end of the step
        loss = model(x).pow(2).mean() + tmp[0] * 0
        loss.backward()
        opt.step()
        kept = torch.zeros(MIB // 4, device=device)  # 1 MiB kept every step, through two views:
        history.remember(kept[:16])  # storages are counted, not tensors, so it is still 1 MiB
        history.remember(kept.view(2, -1))
        del tmp
        return loss.detach()

    return model, opt, step

