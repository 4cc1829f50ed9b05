"""Speech recipe: a clip helper method called between the scaled backward and the scaler step."""
import torch
from torch import nn


class Brain:
    def __init__(self, modules, opt_class, max_grad_value):
        self.modules = modules
        self.optimizer = opt_class(modules.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
        self.max_grad_value = max_grad_value

    def _clip(self):
        nn.utils.clip_grad_value_(self.modules.parameters(), self.max_grad_value)  # expect: SF303

    def fit_batch(self, batch):
        with torch.autocast("cuda"):
            loss = self.compute_objectives(self.compute_forward(batch), batch)
        self.scaler.scale(loss).backward()
        self._clip()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.detach()
