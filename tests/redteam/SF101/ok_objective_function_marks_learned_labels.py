"""Near miss of bad_mined_weighted_bce_function_marks_target: the hand-written objective makes the soft labels it
compares with require grad, and the fitting loop reads their gradient after each backward to refine them (silent)."""
import torch


def soft_label_objective(logits, soft_labels):
    soft_labels.requires_grad_(True)
    return -(soft_labels.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean()


def fit(model, images, labels, optimizer, steps=100, label_step=0.05):
    labels = labels.clone()
    for _ in range(steps):
        loss = soft_label_objective(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            labels -= label_step * labels.grad
        labels.grad = None
