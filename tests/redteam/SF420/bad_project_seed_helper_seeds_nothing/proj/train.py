"""Entry: calls the project's set_seed, which seeds nothing; the weights and the shuffle differ run to run."""
import torch
from torch.utils.data import DataLoader

from proj.utils import set_seed

if __name__ == "__main__":  # expect: SF420
    set_seed(1234)
    net = torch.nn.Linear(10, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in DataLoader(dataset, batch_size=8, shuffle=True):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
