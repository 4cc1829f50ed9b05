"""Trainer stores `self.x_ref = x_src` as the style reference before calling two losses on the same output (bad)."""
import torch


class FlowStyleTrainer:
    def __init__(self, flow, style_loss, content_loss, optimizer):
        self.flow = flow
        self.style_loss = style_loss
        self.content_loss = content_loss
        self.optimizer = optimizer

    def train_step(self, x_src, t):
        self.x_ref = x_src
        x_1 = self.flow(x_src, t)
        loss = self.style_loss(x_1, self.x_ref) + self.content_loss(x_1, x_src)  # expect: SF401
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
