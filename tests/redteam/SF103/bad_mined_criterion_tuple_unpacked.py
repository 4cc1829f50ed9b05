"""Mined shape: a set-prediction criterion returns `(loss, parts)`; the epoch function unpacks it, backpropagates,
steps, and keeps `running_loss = running_loss + loss` over the whole epoch for a periodic print (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def forward(self, predictions, targets):
        masks, labels = targets
        mask_loss = F.binary_cross_entropy_with_logits(predictions["masks"], masks)
        class_loss = F.cross_entropy(predictions["logits"], labels)
        parts = {"mask": mask_loss.item(), "class": class_loss.item()}
        return mask_loss + class_loss, parts


def train_one_epoch(model, loader, optimizer, device, epoch):
    criterion = SetCriterion()
    running_loss = 0.0
    last = 0.0
    for i, batch in enumerate(loader):
        points = batch["points"].to(device)
        targets = (batch["masks"].to(device), batch["labels"].to(device))
        optimizer.zero_grad()
        out = model(points)
        loss, parts = criterion(out, targets)
        loss.backward()
        optimizer.step()
        running_loss = running_loss + loss  # expect: SF103
        if i % 10 == 9:
            last = running_loss / (i + 1)
            print(f"epoch {epoch} step {i + 1}: {last} {parts}")
    return last
