"""SI-SNR: the ratio is bound to a name and read only inside a log10 (ok)."""
import torch

EPS = 1e-8


def si_snr_loss(est, target):
    proj = (est * target).sum(0, keepdim=True) * target / (target.pow(2).sum(0, keepdim=True) + EPS)
    noise = est - proj
    ratio = torch.sum(proj**2, dim=0) / (torch.sum(noise**2, dim=0) + EPS)
    return -(10 * torch.log10(ratio + EPS)).mean()
