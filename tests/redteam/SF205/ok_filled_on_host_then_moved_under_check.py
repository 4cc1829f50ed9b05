"""Near miss: the mask is filled in host memory after it is built and only then moved under a CUDA check
(building it on the device would move the fill there too: host work on purpose)."""
import torch
import torch.nn as nn


class Masker(nn.Module):
    def forward(self, x, keep):
        mask = torch.zeros(x.size(1))
        mask[keep] = 1.0
        if torch.cuda.is_available():
            mask = mask.cuda()
        return x * mask
