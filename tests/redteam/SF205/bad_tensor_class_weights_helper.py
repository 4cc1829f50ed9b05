"""A step helper called from the training loop builds class weights from a Python list on every call."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, target, counts):
    weight = torch.tensor(counts, dtype=torch.float32).cuda()  # expect: SF205
    return F.cross_entropy(logits, target, weight=1.0 / weight)


def train(model, loader, optimizer, counts):
    for x, y in loader:
        loss = weighted_loss(model(x.cuda()), y.cuda(), counts)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
