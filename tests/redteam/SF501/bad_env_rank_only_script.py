"""No init call in sight (a launcher module does it); the script reads torchrun's variables itself."""
import os

import torch
from torch.utils.data import DataLoader

from launcher import setup_distributed

rank = int(os.environ.get("RANK", 0))
world = int(os.environ.get("WORLD_SIZE", 1))
setup_distributed(rank, world)
model = torch.nn.Linear(32, 2)
loader = DataLoader(torch.utils.data.TensorDataset(torch.randn(512, 32), torch.randint(0, 2, (512,))),  # expect: SF501
                    batch_size=32, shuffle=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
