"""Near miss of bad_mined_loss_forward_marks_target: the loss's forward makes the soft labels it receives require
grad, and the training loop reads that gradient after the backward to correct the labels (learned labels, silent)."""
import torch
import torch.nn as nn


class SoftLabelLoss(nn.Module):
    def forward(self, logits, soft_labels):
        soft_labels.requires_grad_(True)
        return -(soft_labels.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean()


def train(model, images, init_labels, optimizer, steps=10, label_lr=0.1):
    criterion = SoftLabelLoss()
    labels = init_labels.clone()
    for _ in range(steps):
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            labels -= label_lr * labels.grad
            labels.grad = None
