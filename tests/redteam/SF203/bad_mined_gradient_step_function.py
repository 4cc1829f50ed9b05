"""Mined shape: a graph-learning gradient-step function switches anomaly detection on at its top and then backpropagates and steps (bad)."""
import torch


def joint_gradient_step(model, batches, optimizer, loss_fn, device):
    task_losses = []
    torch.autograd.set_detect_anomaly(True)  # expect: SF203
    total = torch.tensor(0.0, device=device)
    for graphs, labels in batches:
        total = total + loss_fn(model(graphs.to(device)), labels.to(device))
    task_losses.append(total.item())
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    return task_losses
