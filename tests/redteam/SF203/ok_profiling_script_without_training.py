"""A forward-only export script: it computes no gradients, so nothing runs under anomaly mode here."""
import torch


def export(model, example):
    torch.autograd.set_detect_anomaly(False)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    traced.save("model.pt")
