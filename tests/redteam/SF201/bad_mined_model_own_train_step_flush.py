"""Mined shape: a model class with its own train_step(batch, optimizer) method that clips, steps and then flushes the CUDA cache on every call from the epoch loop (bad)."""
import torch
import torch.nn as nn


class ContrastiveClassifier(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(self.encoder(x)).squeeze(-1)

    def train_step(self, batch, optimizer, weight=0.5):
        self.train()
        optimizer.zero_grad()
        logits = self(batch["x"])
        cls_loss = nn.functional.binary_cross_entropy_with_logits(logits, batch["y"])
        total = weight * cls_loss + (1 - weight) * logits.pow(2).mean()
        total.backward()
        torch.nn.utils.clip_grad_norm_(self.parameters(), max_norm=1.0)
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        return {"total": total.item()}


def fit(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for batch in loader:
            model.train_step(batch, optimizer)
