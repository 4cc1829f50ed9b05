"""A helper named for the version check picks the legacy API only on old torch."""
import torch
from packaging import version


def get_autocast(enabled):
    if version.parse(torch.__version__) < version.parse("1.10"):
        return torch.cuda.amp.autocast(enabled=enabled)
    return torch.autocast("cuda", enabled=enabled)
