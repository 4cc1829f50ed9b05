"""bad step loop self evaluate."""
import torch


class Loop:
    def __init__(self, model, optimizer, data, val_data):
        self.model = model
        self.optimizer = optimizer
        self.data = data
        self.val_data = val_data

    def evaluate(self):
        self.model.eval()
        with torch.no_grad():
            return [self.model(x).mean().item() for x in self.val_data]

    def run(self, steps):
        self.model.train()
        for step in range(steps):
            loss = self.model(next(self.data)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step % 100 == 0:
                self.evaluate()  # expect: SF407
