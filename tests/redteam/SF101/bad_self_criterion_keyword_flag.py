"""Multi-label trainer: targets get requires_grad_(requires_grad=True) (keyword spelling) before self.criterion (bad)."""
import torch
from torch import nn


class MultiLabelTrainer:
    def __init__(self, model, lr):
        self.model = model.cuda()
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)

    def fit_epoch(self, loader):
        self.model.train()
        for images, targets in loader:
            images = images.cuda(non_blocking=True)
            targets = targets.float().cuda(non_blocking=True)
            targets.requires_grad_(requires_grad=True)  # expect: SF101
            logits = self.model(images)
            loss = self.criterion(logits, targets)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
