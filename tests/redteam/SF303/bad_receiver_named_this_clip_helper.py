"""A learner whose methods call the instance `this` clips gradient values in a helper method it calls between
the scaled backward and the scaler's step, before any unscale (bad: the receiver is not `self`)."""
import torch
from torch import nn


class Learner:
    def __init__(this, net, max_value):
        this.net = net
        this.opt = torch.optim.AdamW(net.parameters())
        this.scaler = torch.amp.GradScaler("cuda")
        this.max_value = max_value

    def _bound(this):
        nn.utils.clip_grad_value_(this.net.parameters(), this.max_value)  # expect: SF303

    def learn(this, x, y):
        with torch.autocast("cuda"):
            loss = nn.functional.mse_loss(this.net(x), y)
        this.scaler.scale(loss).backward()
        this._bound()
        this.scaler.step(this.opt)
        this.scaler.update()
        this.opt.zero_grad()
