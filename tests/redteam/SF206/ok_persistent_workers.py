"""The loader already uses workers, pinned memory and persistent workers."""
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main(model):
    train = datasets.CIFAR10("data", train=True, download=True, transform=transforms.ToTensor())
    loader = DataLoader(train, batch_size=128, shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
