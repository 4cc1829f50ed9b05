"""Resuming an LR schedule whose scheduler a setup helper of the file puts on the trainer (Python numbers only)."""
import torch
from torch.optim.lr_scheduler import OneCycleLR


def attach_schedule(trainer, optimizer, total_steps):
    trainer.lr_schedule = OneCycleLR(optimizer, max_lr=3e-4, total_steps=total_steps)


class Trainer:
    def __init__(self, model, optimizer, total_steps):
        self.model = model
        self.optimizer = optimizer
        attach_schedule(self, optimizer, total_steps)

    def resume_schedule(self, schedule_path):
        self.lr_schedule.load_state_dict(torch.load(schedule_path))
