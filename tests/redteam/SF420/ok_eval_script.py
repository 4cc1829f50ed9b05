"""An evaluation script: loads a checkpoint and measures accuracy; no backward, no step."""
import torch
from torch.utils.data import DataLoader

if __name__ == "__main__":
    model = torch.load("ckpt.pt", map_location="cpu", weights_only=False).eval()
    loader = DataLoader(val_ds, batch_size=128, shuffle=True)
    with torch.no_grad():
        acc = sum((model(x).argmax(-1) == y).float().mean().item() for x, y in loader)
    print(acc)
