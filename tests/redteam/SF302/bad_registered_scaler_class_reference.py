"""A registry wraps the legacy scaler class through its submodule path (a bare reference, no call)."""
import torch.cuda.amp as amp

from .core import register

__all__ = ["GradScaler"]

GradScaler = register(amp.grad_scaler.GradScaler)  # expect: SF302
