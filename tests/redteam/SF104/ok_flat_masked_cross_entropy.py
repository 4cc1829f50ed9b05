"""Near miss: the same shifted, flattened, masked rows go to F.cross_entropy (fused, legitimate)."""
import torch.nn.functional as F


def explicit_loss(logits, labels, vocab_size):
    shifted = F.pad(labels, (0, 1), value=-100)[..., 1:]
    values = logits.float().reshape(-1, vocab_size)
    targets = shifted.reshape(-1).to(values.device)
    keep = targets != -100
    return F.cross_entropy(values[keep], targets[keep])
