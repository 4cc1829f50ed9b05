"""ok sequence loss sum returned."""
import torch.nn.functional as F


def sequence_loss(decoder, hidden, targets):
    loss = 0
    for t in range(targets.size(1)):
        logits, hidden = decoder(targets[:, t], hidden)
        loss += F.cross_entropy(logits, targets[:, t])
    return loss / targets.size(1)
