"""Losses behind an object (`self.losses.style(...)`, `self.losses.content(...)`): the style reference is an alias of the source (bad)."""
import torch


class Trainer:
    def __init__(self, model, losses, optimizer):
        self.model = model
        self.losses = losses
        self.optimizer = optimizer

    def step(self, x_src):
        x_style_ref = x_src
        x_1 = self.model(x_src)
        style = self.losses.style(x_1, x_style_ref)  # expect: SF401
        content = self.losses.content(x_1, x_src)
        loss = style + content
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"style": style.item(), "content": content.item()}
