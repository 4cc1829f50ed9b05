"""PSNR: the quotient is inside a log10 (ok)."""
import torch


def psnr(pred, target, data_range=1.0):
    mse = torch.mean((pred - target) ** 2, dim=(1, 2, 3))
    return 10.0 * torch.log10(data_range**2 / (mse + 1e-10))
