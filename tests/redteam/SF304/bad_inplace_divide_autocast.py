"""In-place /= by std + 1e-9 inside an fp16 autocast region (std stays in fp16) (bad)."""
import torch


def embed(encoder, x):
    with torch.autocast("cuda", dtype=torch.float16):
        feats = encoder(x)
        feats /= feats.std(-1, keepdim=True) + 1e-9  # expect: SF304
    return feats
