"""Mined (uncertainty-driven multi-agent learner): inside the batch loop the first agent is picked and a fresh Adam built over it."""
import torch.nn.functional as F
from torch import optim


def train_agents(agents, loader, epochs, lr, device):
    for epoch in range(epochs * len(agents)):
        for x, y in loader:
            model = agents[0]
            optimizer = optim.Adam(model.parameters(), lr=lr)  # expect: SF408
            optimizer.zero_grad()
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
