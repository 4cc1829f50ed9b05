"""The training loop hands each batch's mask to the objective of the other module (bad: the mask is made to require
grad there and nothing reads its gradient)."""
import torch

from .objectives import SoftJaccardLoss


def train(net, loader, optimizer, device):
    jaccard = SoftJaccardLoss()
    for image, mask in loader:
        image, mask = image.to(device), mask.to(device)
        loss = jaccard(torch.sigmoid(net(image)), mask)  # expect: SF101
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
