"""Mined (federated aggregation weights): `torch.div(1, sigma_rms + 1e-8)` over per-client RMS of parameter std devs."""
import torch


def inverse_sigma_weights(client_std):
    stacked = torch.stack(list(client_std.values()))
    sigma_rms = torch.pow(torch.mean(stacked.square(), dim=1), 0.5)
    inv_sigma = torch.div(1, sigma_rms + 1e-8)  # expect: SF304
    return torch.div(inv_sigma, torch.sum(inv_sigma))
