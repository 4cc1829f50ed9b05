"""`self.scheduler` is the trainer's own work queue for async checkpoint uploads, stepped on every pass."""
import torch


class UploadQueue:
    def __init__(self):
        self.pending = []

    def step(self):
        if self.pending:
            self.pending.pop(0)()


class Trainer:
    def __init__(self, model, accum):
        self.model = model
        self.accum = accum
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.scheduler = UploadQueue()

    def run(self, loader):
        for i, (x, y) in enumerate(loader):
            (torch.nn.functional.mse_loss(self.model(x), y) / self.accum).backward()
            self.scheduler.step()
            if (i + 1) % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
