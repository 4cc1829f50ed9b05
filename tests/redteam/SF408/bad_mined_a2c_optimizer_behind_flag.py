"""Mined (continuous A2C script): per training batch, `if OPT_NAME == "adam":` builds the Adam and steps it in the same branch."""
import torch
import torch.nn.functional as F
from torch import optim

OPT_NAME = "adam"
LR = 5e-5


def run(net, experience_source, unpack):
    batch = []
    for exp in experience_source:
        batch.append(exp)
        if len(batch) < 32:
            continue
        states, actions, returns = unpack(batch)
        batch.clear()
        if OPT_NAME is None or OPT_NAME == "adam":
            optimizer = optim.Adam(net.parameters(), lr=LR)  # expect: SF408
            optimizer.zero_grad()
            mu, var, value = net(states)
            loss = F.mse_loss(value.squeeze(-1), returns) - (mu * 0).mean()
            loss.backward()
            optimizer.step()
