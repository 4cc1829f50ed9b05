"""A smoke test under tests/: trains a tiny model, random data, run as a script too."""
import torch

if __name__ == "__main__":
    m = torch.nn.Linear(2, 1)
    o = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(4, 2)
    o.zero_grad()
    m(x).sum().backward()
    o.step()
