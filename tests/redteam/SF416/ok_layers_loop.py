"""Layers drawn from a ModuleList or `model.modules()` are modules."""
import torch.nn as nn


def cast_norms(model):
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            m.float()
    for layer in model.layers:
        layer.cuda()
