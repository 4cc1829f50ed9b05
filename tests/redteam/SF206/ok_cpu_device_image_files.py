"""A CPU-only training script over image files: no accelerator waits for the loader."""
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

DEVICE = "cpu"


class Tiles(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return torch.tensor(Image.open(self.paths[i]).getdata(), dtype=torch.float32)


def main(model, paths):
    loader = DataLoader(Tiles(paths), batch_size=4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for tiles in loader:
        tiles = tiles.to(DEVICE)
        opt.zero_grad()
        model(tiles).sum().backward()
        opt.step()
