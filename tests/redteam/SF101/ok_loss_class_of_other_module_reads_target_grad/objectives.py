"""Near miss of bad_loss_class_of_other_module_marks_target: the objective flags the mask as requiring grad to
penalise the loss's sensitivity to label noise, and reads that gradient (legitimate)."""
import torch
import torch.nn as nn


class RobustJaccardLoss(nn.Module):
    def forward(self, probs, mask):
        mask.requires_grad = True
        overlap = (probs * mask).sum()
        loss = 1 - (overlap + 1) / (probs.sum() + mask.sum() - overlap + 1)
        (sensitivity,) = torch.autograd.grad(loss, mask, create_graph=True)
        return loss + 0.1 * sensitivity.pow(2).mean()
