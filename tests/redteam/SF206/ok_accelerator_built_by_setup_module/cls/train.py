"""The accelerator comes from a function of another module, built for the CPU: what it prepares stays on
the host, so a loader without workers starves no device."""
import torch
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

from .setup_run import make_accelerator


def main(model):
    accelerator = make_accelerator()
    loader = DataLoader(ImageFolder("data/train", transform=T.ToTensor()), batch_size=16, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for images, labels in loader:
        accelerator.backward(torch.nn.functional.cross_entropy(model(images), labels))
        optimizer.step()
        optimizer.zero_grad()
