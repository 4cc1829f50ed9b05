"""A trainer class: the dataset reads a .npz per sample through a method of its own; the device is a config field."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def _read(self, path):
        with np.load(path) as archive:
            return archive["x"], archive["y"]

    def __getitem__(self, i):
        x, y = self._read(self.files[i])
        return torch.from_numpy(x), torch.from_numpy(y)


class Trainer:
    def __init__(self, model, files, cfg):
        self.model = model
        self.device = cfg.device
        self.loader = DataLoader(Samples(files), batch_size=cfg.batch_size, shuffle=True)  # expect: SF206
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    def train_epoch(self):
        for x, y in self.loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
