"""Each pass builds a new model and its optimizer (a one-step probe per seed)."""
import torch

for seed in seeds:
    torch.manual_seed(seed)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    net(x).mean().backward()
    opt.step()
    results.append(evaluate(net))
