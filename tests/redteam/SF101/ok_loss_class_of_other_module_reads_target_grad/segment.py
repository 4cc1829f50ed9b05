"""The training loop of the near miss: the same hand-off as the bad case."""
import torch

from .objectives import RobustJaccardLoss


def train(net, loader, optimizer, device):
    jaccard = RobustJaccardLoss()
    for image, mask in loader:
        image, mask = image.to(device), mask.to(device).float()
        loss = jaccard(torch.sigmoid(net(image)), mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
