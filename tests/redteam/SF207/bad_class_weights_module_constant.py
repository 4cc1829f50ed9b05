"""Loss weights defined at module level and moved inside the epoch loop."""
import torch
from torch import nn

LABEL_WEIGHTS = torch.FloatTensor([0.2, 0.8])


def run(model, loader, optimizer, epochs):
    for _ in range(epochs):
        for images, labels in loader:
            logits = model(images.cuda())
            loss = nn.functional.cross_entropy(logits, labels.cuda(), weight=LABEL_WEIGHTS.cuda())  # expect: SF207
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
