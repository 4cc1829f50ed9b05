"""Near miss: the Dice loss module's forward casts its target to float without touching its grad flag, and the
training loop's images are marked requiring grad for an input-gradient penalty that is read (legitimate)."""
import torch
import torch.nn as nn


class SoftDiceLoss(nn.Module):
    def forward(self, scores, target):
        target = target.float()
        probs = torch.sigmoid(scores)
        inter = (probs * target).sum(dim=(-1, -2))
        union = probs.sum(dim=(-1, -2)) + target.sum(dim=(-1, -2))
        return 1 - ((2 * inter + 1e-5) / (union + 1e-5)).mean()


def train(model, loader, optimizer, penalty=0.1):
    criterion = SoftDiceLoss()
    for images, trimaps in loader:
        images.requires_grad_(True)
        loss = criterion(model(images), trimaps)
        (grad,) = torch.autograd.grad(loss, images, create_graph=True)
        loss = loss + penalty * grad.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
