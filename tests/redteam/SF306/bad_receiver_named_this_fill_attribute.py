"""A block whose methods call the instance `this` fills scores in place with a constant kept on it, under float16
autocast in the training step (bad: the receiver is not `self`)."""
import torch
from torch import nn


class ScoreBlock(nn.Module):
    def __init__(this):
        super().__init__()
        this.fill = -1e9

    def forward(this, q, k, v, padding):
        scores = torch.bmm(q, k.transpose(1, 2))
        scores.masked_fill_(padding[:, None, :], this.fill)  # expect: SF306
        return torch.bmm(scores.softmax(-1), v)


def train_step(model, batch, optimizer, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
