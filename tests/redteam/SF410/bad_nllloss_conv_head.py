"""Segmentation: `nn.NLLLoss` fed the raw output of a 1x1 `Conv2d` head (bad)."""
import torch.nn as nn

head = nn.Conv2d(64, 21, kernel_size=1)
criterion = nn.NLLLoss(ignore_index=255)


def seg_step(backbone, images, masks, optimizer):
    out = head(backbone(images))
    loss = criterion(out, masks)  # expect: SF410
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
