"""Cpu autocast in benchmark (must be reported)."""
import torch


def cpu_forward(model, batch, use_bf16):
    with torch.cpu.amp.autocast(enabled=use_bf16):  # expect: SF302
        return model(batch)
