"""Adam built on `filter(lambda p: p.requires_grad, ...)` and a module-level loop that undoes each step with `p -= -lr * p.grad` (bad)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
model[0].requires_grad_(False)
trainable = list(filter(lambda p: p.requires_grad, model.parameters()))
opt = torch.optim.Adam(trainable, lr=1e-3)
lr = 1e-3

for step in range(100):
    x = torch.randn(64, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for p in trainable:
            p -= -lr * p.grad  # expect: SF402
