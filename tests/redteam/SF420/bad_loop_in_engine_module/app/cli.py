"""Entry: builds an MLP and a shuffling loader, hands them to engine.fit; nothing is seeded."""
import torch
from torch.utils.data import DataLoader

from app.engine import fit

if __name__ == "__main__":  # expect: SF420
    net = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    loader = DataLoader(dataset, batch_size=16, shuffle=True)
    fit(net, torch.optim.SGD(net.parameters(), lr=0.05), loader, epochs=3)
