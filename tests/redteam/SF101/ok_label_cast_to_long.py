"""Classification step: the label is built as a float tensor that requires grad, but the cross-entropy target is its integer cast, which requires no grad (legitimate for this rule)."""
import torch
import torch.nn.functional as F


def classify_step(model, images, classes, optimizer, device):
    labels = torch.tensor(classes, dtype=torch.float32, requires_grad=True).to(device).long()
    logits = model(images.to(device))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
