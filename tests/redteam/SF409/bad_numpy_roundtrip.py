"""Prediction sent through numpy for post-processing and back with `requires_grad_()` (bad)."""
import torch
import torch.nn.functional as F


def train_step(model, batch, optimizer, postprocess):
    logits = model(batch["x"])
    logits = torch.from_numpy(postprocess(logits.detach().cpu().numpy())).requires_grad_()  # expect: SF409
    loss = F.cross_entropy(logits, batch["y"])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
