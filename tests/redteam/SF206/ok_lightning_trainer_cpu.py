"""A Lightning module reading files per item, run by a CPU trainer in the same file."""
import lightning.pytorch as pl
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Files(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return torch.tensor(Image.open(self.paths[i]).getdata(), dtype=torch.float32)


class Model(pl.LightningModule):
    def __init__(self, paths):
        super().__init__()
        self.paths = paths
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).mean()

    def train_dataloader(self):
        return DataLoader(Files(self.paths), batch_size=2)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


pl.Trainer(accelerator="cpu", max_epochs=1).fit(Model(["a.png"]))
