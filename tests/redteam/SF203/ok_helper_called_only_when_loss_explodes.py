"""A method that re-runs the batch under anomaly mode, called only when the loss is not finite."""
import math

import torch


class Trainer:
    def diagnose(self, batch):
        with torch.autograd.detect_anomaly():
            self.model(batch).loss.backward()

    def train_step(self, batch):
        loss = self.model(batch).loss
        if not math.isfinite(loss.item()):
            self.diagnose(batch)
            return None
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()
