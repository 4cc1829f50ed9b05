"""Mined shape: a full-batch mapping fit (one step per epoch) empties the CUDA cache after every optimizer step (bad)."""
import torch
import torch.nn.functional as F


def fit_mapping(weights, source, target, epochs, weight_align=1.0):
    optimizer = torch.optim.Adam([weights], lr=1e-3)
    for epoch in range(epochs):
        mapped = weights @ source
        l_proj = -F.cosine_similarity(mapped, target, dim=0).mean()
        l_align = (weights.sum(0) - 1).pow(2).mean()
        loss = l_proj + weight_align * l_align
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        with torch.no_grad():
            snapshot = weights.double().cpu().numpy()
    return snapshot
