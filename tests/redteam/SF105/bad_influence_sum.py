"""TracIn-style influence: the test-gradient sum over a test loader lives on the device as long as the model."""
import torch


def test_gradient_sum(net, test_loader, loss_fn):
    total = [p.new_zeros(p.size()) for p in net.parameters()]  # expect: SF105
    for step, (x, y) in enumerate(test_loader):
        net.zero_grad()
        loss_fn(net(x), y).backward()
        for t, p in zip(total, net.parameters()):
            t += p.grad
    norm = torch.sqrt(sum((t * t).sum() for t in total))
    print("test gradient norm", norm.item())
