"""Try new then fallback in except (must stay silent)."""
from contextlib import nullcontext

import torch


def autocast_ctx(enabled: bool):
    if not enabled:
        return nullcontext()
    try:
        return torch.amp.autocast(device_type="cuda", enabled=True)
    except (AttributeError, TypeError):
        return torch.cuda.amp.autocast(enabled=True)
