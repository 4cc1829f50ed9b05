"""LBFGS: `optimizer.step(closure)`, the closure doing forward and backward (several times a step)."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4, history_size=3)
x = torch.randn(32, 4)
y = x[:, :1] * 2 - x[:, 1:2]
for it in range(50):
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)
