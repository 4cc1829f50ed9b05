"""L2 normalisation under fp16 autocast: autocast computes norm in float32 (ok)."""
import torch
import torch.nn.functional as F


def contrastive(encoder, a, b, temperature=0.1):
    with torch.autocast("cuda"):
        za, zb = encoder(a), encoder(b)
        za = za / (za.norm(dim=1, keepdim=True) + 1e-12)
        zb = zb / (zb.norm(dim=1, keepdim=True) + 1e-12)
        logits = za @ zb.T / temperature
    return F.cross_entropy(logits.float(), torch.arange(len(a), device=a.device))
