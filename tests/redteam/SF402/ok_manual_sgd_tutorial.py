"""Linear regression from scratch: weights updated by hand with `w -= lr * w.grad` under no_grad, no optimizer anywhere (legitimate manual SGD)."""
import torch

x = torch.randn(256, 3)
y = x @ torch.tensor([1.5, -2.0, 0.5]) + 0.3
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

for epoch in range(100):
    pred = x @ w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
