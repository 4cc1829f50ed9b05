"""Train a small regression network with Lightning's Trainer.fit, as a user writes it.

Automatic optimization: Lightning calls `optimizer.step(closure)`, and the closure runs
`training_step` and the backward pass. Generated data, CPU, no logger, no checkpoints:
`python lightning_fit.py --max-steps 20` runs in seconds.
"""

import argparse

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
        self.train_losses = []

    def training_step(self, batch, batch_idx):
        features, target = batch
        loss = nn.functional.mse_loss(self.net(features), target)
        self.train_losses.append(loss.item())
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


def make_data(samples, seed):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(samples, 16, generator=generator)
    target = features[:, :4].sum(dim=1, keepdim=True).sin()
    return TensorDataset(features, target)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    L.seed_everything(0)
    loader = DataLoader(make_data(2048, seed=0), batch_size=args.batch_size, shuffle=True)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        max_steps=args.max_steps,
        gradient_clip_val=1.0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = Regressor(lr=args.lr)
    trainer.fit(model, loader)
    print(f"trained {trainer.global_step} steps, last loss {model.train_losses[-1]:.4f}")


if __name__ == "__main__":
    main()
