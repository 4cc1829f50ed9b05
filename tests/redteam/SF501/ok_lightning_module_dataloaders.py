"""Lightning module returning a plain loader; the Trainer adds the sampler."""
import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader


class LitClassifier(pl.LightningModule):
    def __init__(self, net, train_set):
        super().__init__()
        self.net = net
        self.train_set = train_set

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=32, shuffle=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


if __name__ == "__main__":
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp")
    trainer.fit(LitClassifier(None, None))
