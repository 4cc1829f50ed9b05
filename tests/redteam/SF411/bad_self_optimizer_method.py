"""Trainer whose optimizer is built in `__init__`, accumulating in `train` over `self.grad_accum_steps` (bad)."""
import torch
from torch import nn


class Finetuner:
    def __init__(self, model, grad_accum_steps=2):
        self.model = model
        self.grad_accum_steps = grad_accum_steps
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    def train(self, loader):
        for step, (inputs, labels) in enumerate(loader, start=1):
            logits = self.model(inputs)
            loss = self.criterion(logits, labels)
            loss.backward()  # expect: SF411
            if step % self.grad_accum_steps == 0:
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
