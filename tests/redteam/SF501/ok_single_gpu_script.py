"""A single-process training script."""
import torch
from torch.utils.data import DataLoader


def train(model, dataset, epochs, device="cuda"):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
            opt.step()
