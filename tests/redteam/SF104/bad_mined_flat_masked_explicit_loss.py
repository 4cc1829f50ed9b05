"""Mined shape: an "explicit" LM loss helper shifts labels with F.pad, flattens the logits to [N, V] in float32,
keeps the labelled rows with a boolean mask and takes `-values[keep].log_softmax(dim=-1).gather(1, ...)`; the
training step backpropagates it (bad: a float32 [N, V] log-prob tensor per step)."""
import torch
import torch.nn.functional as F


def explicit_loss(logits, labels, vocab_size):
    shifted = F.pad(labels, (0, 1), value=-100)[..., 1:]
    values = logits.float().reshape(-1, vocab_size)
    targets = shifted.reshape(-1).to(values.device)
    keep = targets != -100
    return -values[keep].log_softmax(dim=-1).gather(1, targets[keep, None]).mean()  # expect: SF104


def train_step(model, batch, optimizer, vocab_size):
    logits = model(batch["input_ids"]).logits
    loss = explicit_loss(logits, batch["labels"], vocab_size)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
