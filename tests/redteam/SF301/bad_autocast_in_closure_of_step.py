"""Autocast in closure of step (must be reported)."""
import torch


def make_train_step(model, optimizer):
    def train_step(batch):
        with torch.amp.autocast("cuda"):  # expect: SF301
            loss = model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    return train_step
