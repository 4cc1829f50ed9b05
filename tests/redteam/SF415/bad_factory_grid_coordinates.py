"""A neural field: the coordinate grid comes from linspace/meshgrid factories and is checkpointed into the MLP."""
import torch
from torch.utils.checkpoint import checkpoint


def render(mlp, n):
    coords = torch.linspace(-1, 1, n)
    grid = torch.stack(torch.meshgrid(coords, coords, indexing="ij"), -1).reshape(-1, 2)
    return checkpoint(mlp, grid)  # expect: SF415
