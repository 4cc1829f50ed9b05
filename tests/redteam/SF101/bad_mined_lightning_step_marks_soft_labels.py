"""Mined shape: a Lightning module's training_step marks the one-hot labels and the images with
`.requires_grad = True`, takes log-softmax logits, hands the labels to `self.criterion` and their argmax to an
accuracy metric, and returns the loss to the trainer (bad: nothing reads the labels' gradient)."""
import pytorch_lightning as pl
import torch
import torch.nn.functional as F


class SoftLabelClassifier(pl.LightningModule):
    def __init__(self, backbone, criterion, accuracy):
        super().__init__()
        self.backbone = backbone
        self.criterion = criterion
        self.accuracy = accuracy

    def forward(self, images):
        return self.backbone(images)

    def training_step(self, batch, batch_idx):
        _, _, images, one_hot = batch
        one_hot.requires_grad = True  # expect: SF101
        images.requires_grad = True
        log_probs = F.log_softmax(self.backbone(images), 1)
        loss = self.criterion(log_probs, one_hot)
        self.accuracy.update(torch.argmax(log_probs, dim=1).cpu(), torch.argmax(one_hot, dim=1).cpu())
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
