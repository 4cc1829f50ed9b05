"""An optimizer whose step() calls another optimizer's step(), as ZeroRedundancyOptimizer or a
Lookahead wrapper do: one training step, though both optimizers' step hooks fire."""

import torch


class Wrapper(torch.optim.Optimizer):
    def __init__(self, inner):
        self.inner = inner
        super().__init__(inner.param_groups[0]["params"], {})

    def step(self, closure=None):
        return self.inner.step(closure)


model = torch.nn.Linear(4, 1)
optimizer = Wrapper(torch.optim.SGD(model.parameters(), lr=0.1))
for it in range(20):
    loss = model(torch.randn(2, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
