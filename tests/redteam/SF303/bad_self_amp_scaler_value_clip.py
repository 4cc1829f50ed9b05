"""A trainer clips gradient values with `self.amp_scaler` scaling the loss; no unscale."""
import torch
from torch.nn.utils import clip_grad_value_


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
        self.amp_scaler = torch.amp.GradScaler("cuda")

    def step(self, batch):
        self.opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch)
        self.amp_scaler.scale(loss).backward()
        clip_grad_value_(self.model.parameters(), 0.1)  # expect: SF303
        self.amp_scaler.step(self.opt)
        self.amp_scaler.update()
