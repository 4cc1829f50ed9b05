"""A notebook-like script: random data, a linear model, trained at module level."""
import torch

X = torch.randn(256, 3)
y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(256)
w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(100):
    loss = ((X @ w - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()  # expect: SF420
    opt.step()
