"""SimSiam: the other branch's projection is a detached target (correct)."""
import torch.nn.functional as F


def simsiam_loss(p1, p2, z1, z2):
    return -(F.cosine_similarity(p1, z2.detach(), dim=-1).mean() + F.cosine_similarity(p2, z1.detach(), dim=-1).mean()) / 2
