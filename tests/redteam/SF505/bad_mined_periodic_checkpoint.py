"""Paraphrase of a mined diffusion-model trainer: every few epochs rank 0 saves the DDP wrapper's state dict."""
import torch
from torch.nn.parallel import DistributedDataParallel


def run(rank, unet, loader, optimizer, epochs, folder):
    model = DistributedDataParallel(unet.to(rank), device_ids=[rank])
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch.to(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            if epoch % 4 == 0: torch.save(model.state_dict(), f"{folder}/{epoch}")  # expect: SF505
