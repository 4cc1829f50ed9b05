"""Federated round: each client trains a fresh copy of the global model with its own optimizer."""
import copy
import torch

for client in clients:
    local = copy.deepcopy(global_model)
    opt = torch.optim.SGD(local.parameters(), lr=0.01)
    opt.zero_grad()
    client.loss(local).backward()
    opt.step()
    updates.append(local.state_dict())
