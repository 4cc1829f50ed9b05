"""Near miss: the criterion's tuple is unpacked the same way, but the running sum takes `loss.item()` (legitimate)."""
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def forward(self, predictions, targets):
        masks, labels = targets
        mask_loss = F.binary_cross_entropy_with_logits(predictions["masks"], masks)
        class_loss = F.cross_entropy(predictions["logits"], labels)
        return mask_loss + class_loss, {"mask": mask_loss.item(), "class": class_loss.item()}


def train_one_epoch(model, loader, optimizer, device):
    criterion = SetCriterion()
    running_loss = 0.0
    for i, batch in enumerate(loader):
        targets = (batch["masks"].to(device), batch["labels"].to(device))
        optimizer.zero_grad()
        loss, parts = criterion(model(batch["points"].to(device)), targets)
        loss.backward()
        optimizer.step()
        running_loss = running_loss + loss.item()
    return running_loss / max(len(loader), 1)
