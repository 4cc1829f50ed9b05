"""An evaluation loop over dict batches of a default DataLoader: the label entry is moved and thrown away."""
import torch
from torch.utils.data import DataLoader


@torch.no_grad()
def accuracy(model, dataset, device):
    hits = 0
    for batch in DataLoader(dataset, batch_size=16):
        batch["label"].to(device, non_blocking=True)  # expect: SF416
        logits = model(batch["pixels"].to(device))
        hits += (logits.argmax(-1) == batch["label"]).sum().item()
    return hits
