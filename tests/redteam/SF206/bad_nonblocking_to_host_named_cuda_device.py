"""Batches moved with `non_blocking=True` to `cpu_target`, which the script binds to `torch.device("cuda")`, from a
loader that does not pin its memory: the copy is staged and synchronous (bad, whatever the device is called)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

cpu_target = torch.device("cuda")


def main(model, x, y):
    loader = DataLoader(TensorDataset(x, y), batch_size=64, num_workers=4)  # expect: SF206
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        xb, yb = xb.to(cpu_target, non_blocking=True), yb.to(cpu_target, non_blocking=True)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()
