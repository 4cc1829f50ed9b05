"""Epochs around the micro-batch loop; the clip sits before the backward, inside the inner loop."""
import torch


def train(model, loader, optimizer, epochs, accum, max_norm):
    for epoch in range(epochs):
        for j, (src, tgt) in enumerate(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # expect: SF418
            loss = model(src, labels=tgt).loss / accum
            loss.backward()
            if (j + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
