"""argparse decides the worker count and pinning: the author's choice, even when the default is 0."""
import argparse

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Pictures(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return torch.tensor(list(Image.open(self.paths[i]).getdata()), dtype=torch.float32)


def main(model, paths):
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--pin", action="store_true")
    args = parser.parse_args()
    loader = DataLoader(Pictures(paths), batch_size=8, num_workers=args.workers, pin_memory=args.pin)
    opt = torch.optim.Adam(model.parameters())
    for x in loader:
        x = x.cuda(non_blocking=True)
        model(x).mean().backward()
        opt.step()
        opt.zero_grad()
