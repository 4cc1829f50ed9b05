"""A trainer object (not a module) holding a host tensor and moving it on each step."""
import torch


class Trainer:
    def __init__(self, model, optimizer, weights):
        self.model = model
        self.optimizer = optimizer
        self.weights = torch.tensor(weights)

    def train_step(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.model(x), y, weight=self.weights.cuda())  # expect: SF207
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss
