"""A step that builds a padding mask with a same-file helper and moves it with a discarded `.to(dev)`."""
import torch


def padding_mask(lengths, width):
    return torch.arange(width)[None, :] < lengths[:, None]


def train_step(model, tokens, lengths, optimizer, dev):
    mask = padding_mask(lengths, tokens.size(1))
    mask.to(dev)  # expect: SF416
    out = model(tokens.to(dev))
    loss = (out.pow(2).sum(-1) * mask).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
