"""Mined (Gaussian filter layer): a plain list of per-axis sigma Parameters, each registered with register_parameter."""
import torch


class GaussianBlur(torch.nn.Module):
    def __init__(self, dims, sigma, requires_grad=False):
        super().__init__()
        self.sigma = [torch.nn.Parameter(torch.as_tensor(s, dtype=torch.float), requires_grad=requires_grad) for s in sigma]
        for idx, param in enumerate(self.sigma):
            self.register_parameter(f"kernel_sigma_{idx}", param)

    def forward(self, x):
        return x * torch.stack(list(self.sigma)).prod()
