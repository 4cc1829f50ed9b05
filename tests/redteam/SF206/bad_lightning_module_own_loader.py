"""A LightningModule that builds its own training loader over JSON-lines files read per item."""
import json

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset


class Records(Dataset):
    def __init__(self, offsets, path):
        self.offsets, self.path = offsets, path

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        with open(self.path) as handle:
            handle.seek(self.offsets[i])
            record = json.loads(handle.readline())
        return torch.tensor(record["features"]), torch.tensor(record["label"])


class Classifier(pl.LightningModule):
    def __init__(self, offsets, path):
        super().__init__()
        self.net = torch.nn.Linear(64, 10)
        self.offsets, self.path = offsets, path

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def train_dataloader(self):
        loader = DataLoader(Records(self.offsets, self.path), batch_size=64, shuffle=True)  # expect: SF206
        return loader

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


if __name__ == "__main__":
    pl.Trainer(accelerator="gpu", devices=1, max_epochs=3).fit(Classifier([0], "data.jsonl"))
