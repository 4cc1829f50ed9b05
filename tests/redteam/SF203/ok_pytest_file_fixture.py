"""A test module (not named test_*, but inside a test function) checks gradients with anomaly mode."""
import torch


def test_gradients_have_no_nan():
    net = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with torch.autograd.detect_anomaly():
        net(torch.randn(3, 4)).sum().backward()
    opt.step()
