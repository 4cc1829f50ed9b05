"""Projection that runs only when the norm exceeds the radius (ok)."""
import torch


def project(q, radius=0.9):
    norm = torch.linalg.norm(q)
    if norm > radius:
        q = q * (radius / (norm + 1e-12))
    return q
