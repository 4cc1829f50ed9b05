"""The name held probabilities earlier but is re-bound to logits before the loss (correct)."""
import torch.nn.functional as F


def step(model, x, y):
    out = F.softmax(model(x), dim=1)
    entropy = -(out * out.log()).sum(1).mean()
    out = model.head_logits
    return F.cross_entropy(out, y) + 0.01 * entropy
