"""A margin constant built on the device in every training step."""
import torch


def train_step(model, batch, optimizer, device):
    anchor, positive, negative = (t.to(device) for t in batch)
    margin = torch.tensor([0.3], device=device)  # expect: SF207
    d_pos = (model(anchor) - model(positive)).pow(2).sum(1)
    d_neg = (model(anchor) - model(negative)).pow(2).sum(1)
    loss = torch.relu(d_pos - d_neg + margin).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
