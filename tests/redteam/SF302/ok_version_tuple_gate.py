"""Version tuple gate (must stay silent)."""
import torch

TORCH_VERSION = tuple(int(x) for x in torch.__version__.split(".")[:2])

if TORCH_VERSION >= (2, 4):
    GradScaler = torch.amp.GradScaler
else:
    GradScaler = torch.cuda.amp.GradScaler
