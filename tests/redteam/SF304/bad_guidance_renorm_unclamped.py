"""Guidance renormalisation without the clamp: a norm ratio that explodes (bad)."""
import torch


def renorm_guidance(noise_pred_text, noise_pred):
    cond_norm = torch.norm(noise_pred_text, dim=-1, keepdim=True)
    noise_norm = torch.norm(noise_pred, dim=-1, keepdim=True)
    return noise_pred * (cond_norm / (noise_norm + 1e-8))  # expect: SF304
