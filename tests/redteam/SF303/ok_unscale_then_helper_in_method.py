"""A method unscales, then calls a clip method, then steps."""
import torch


class Runner:
    def _clip(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)

    def update(self, loss):
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        self._clip()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
