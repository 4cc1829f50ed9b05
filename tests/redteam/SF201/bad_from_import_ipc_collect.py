"""`from torch.cuda import empty_cache, ipc_collect` called on every iteration of a segmentation loop (bad)."""
import torch.nn.functional as F
from torch.cuda import empty_cache, ipc_collect


def train_segmentation(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for images, masks in loader:
            logits = model(images.cuda())
            loss = F.cross_entropy(logits, masks.cuda(), ignore_index=255)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ipc_collect()
            empty_cache()  # expect: SF201
