"""A fast in-memory dataset with workers, but `pin_memory=False` spelled out while the loop copies non_blocking."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main(model, x_train, y_train):
    device = torch.device("cuda")
    ds = TensorDataset(x_train, y_train)
    loader = DataLoader(ds, batch_size=1024, shuffle=True, num_workers=2, pin_memory=False)  # expect: SF206
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(20):
        for xb, yb in loader:
            xb = xb.to(device=device, non_blocking=True)
            yb = yb.to(device=device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
