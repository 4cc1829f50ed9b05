"""timm-style `functools.partial` around the legacy autocast (a reference, reported without a fix)."""
from functools import partial

import torch


def build_amp(use_amp):
    if use_amp:
        return partial(torch.cuda.amp.autocast, dtype=torch.float16)  # expect: SF302
    return None
