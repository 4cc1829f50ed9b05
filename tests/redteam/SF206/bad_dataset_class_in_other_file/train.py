"""The training script imports the dataset from data.py and loads it with no workers."""
import torch
from torch.utils.data import DataLoader

from data import Photos


def train(model, paths, transform):
    loader = DataLoader(Photos(paths, transform), batch_size=32, shuffle=True)  # expect: SF206
    opt = torch.optim.Adam(model.parameters())
    for images in loader:
        images = images.cuda()
        loss = model(images).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
