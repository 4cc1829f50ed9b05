"""Multi-scale feature extractor building a dict of detached features inside one forward call and returning it (local, dropped after the call)."""
import torch
import torch.nn as nn


class PyramidExtractor(nn.Module):
    def __init__(self, stages):
        super().__init__()
        self.stages = nn.ModuleList(stages)

    def forward(self, x):
        feats = {}
        for i, stage in enumerate(self.stages):
            x = stage(x)
            feats[f"p{i + 2}"] = x.detach()
        return feats


def train(head, extractor, loader, optimizer):
    for images, targets in loader:
        pyramid = extractor(images)
        loss = head(pyramid, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
