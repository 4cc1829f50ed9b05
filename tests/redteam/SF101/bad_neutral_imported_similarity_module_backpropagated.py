"""A structural-similarity module of another package, named for what it measures (`MS_SSIM`): one minus
its result, returned by a helper of the file, is what the step backpropagates, so `clean` is a loss
target, made to require grad with nothing reading its gradient."""
import torch
from pytorch_msssim import MS_SSIM

similarity = MS_SSIM(data_range=1.0, channel=3)


def fidelity(restored, clean):
    return 1 - similarity(restored, clean)


def train(denoiser, loader, optimizer, device):
    for noisy, clean in loader:
        clean = torch.tensor(clean, requires_grad=True).to(device)  # expect: SF101
        restored = denoiser(noisy.to(device))
        value = fidelity(restored, clean)
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
