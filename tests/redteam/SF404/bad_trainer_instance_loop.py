"""A trainer's step method called on an instance from a module-level loop; nothing clears the gradients (bad)."""
import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    def train_step(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()  # expect: SF404
        return loss.detach()


trainer = Trainer(torch.nn.Linear(8, 2))
for x, y in loader:
    trainer.train_step(x, y)
