"""A project module named `checkpoint` (saving and loading to disk)."""
import torch

from . import checkpoint
from .checkpoint import checkpoint as save_ckpt


def train(model, opt, loader, run_dir):
    for epoch in range(3):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        checkpoint.checkpoint(model, opt, run_dir, epoch)
        save_ckpt(model, run_dir)
