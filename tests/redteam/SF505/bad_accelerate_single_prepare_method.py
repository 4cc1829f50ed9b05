"""A trainer prepares only the model (one argument) and saves it in a method through a local name."""
import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)
        self.optimizer = optimizer

    def step(self, x, y):
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.accelerator.backward(loss)
        self.optimizer.step()

    def save(self, path):
        weights = self.model.state_dict()  # expect: SF505
        torch.save(weights, path)
