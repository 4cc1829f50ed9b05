"""The legacy class through its implementation module path."""
import torch


def forward_fp32(block, x):
    with torch.cuda.amp.autocast_mode.autocast(enabled=False):  # expect: SF302
        return block(x.float())
