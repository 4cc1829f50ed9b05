"""An unpinned loader, but every batch is pinned by hand before its non_blocking copy."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main(model, x, y):
    loader = DataLoader(TensorDataset(x, y), batch_size=512, shuffle=True)
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        xb = xb.pin_memory().cuda(non_blocking=True)
        yb = yb.pin_memory().cuda(non_blocking=True)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
