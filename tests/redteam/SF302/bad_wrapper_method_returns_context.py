"""Wrapper method returns context (must be reported)."""
import torch


class MixedPrecision:
    """Bundles the scaler and the autocast context of a trainer."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and torch.cuda.is_available()
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.enabled)  # expect: SF302

    def autocast(self):
        return torch.cuda.amp.autocast(enabled=self.enabled)  # expect: SF302

    def backward(self, loss, optimizer):
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()
