"""A constant table copied into a trainable leaf handed to an optimizer (correct)."""
import torch

init = torch.zeros(10, 16)
codebook = init.clone().detach().requires_grad_(True)
opt = torch.optim.SGD([codebook], lr=0.1)
for x in loader:
    loss = ((x[:, None] - codebook[None]) ** 2).sum(-1).min(1).values.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
