"""CPU-only toy regression: per-step item() reads cost nothing on the host (ok)."""
import torch

net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for xb, yb in batches:
    pred = net(xb)
    loss = ((pred - yb) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for w in net.parameters():
        print(w.grad.abs().max().item())
