"""Mined (mesh fitting): the optimised leaf tensor of vertex offsets is clipped directly."""
import torch


def fit(mesh_loss, n_verts, steps):
    offsets = torch.zeros(n_verts, 3, requires_grad=True)
    optimizer = torch.optim.SGD([offsets], lr=1.0, momentum=0.9)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = mesh_loss(offsets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(offsets, 1)
        optimizer.step()
    return offsets
