"""Accelerate scales the float16 loss in its own backward; the Accelerator is held by a variable with a neutral name (`acc`)."""
import torch
from accelerate import Accelerator


def train(model, optimizer, loader):
    acc = Accelerator(mixed_precision="fp16")
    model, optimizer, loader = acc.prepare(model, optimizer, loader)
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).mean()
        acc.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
