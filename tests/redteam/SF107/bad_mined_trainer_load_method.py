"""Mined shape: a Trainer that moved its model to the device in __init__ has a `load(path)` method doing `self.model.load_state_dict(torch.load(path))` (bad)."""
import os

import torch


class PruningTrainer:
    def __init__(self, model, device="cuda", out_dir="checkpoints/"):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.out_dir = out_dir

    def load(self, path):
        self.model.load_state_dict(torch.load(path))  # expect: SF107

    def save(self):
        os.makedirs(self.out_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(self.out_dir, "last.pth"))
