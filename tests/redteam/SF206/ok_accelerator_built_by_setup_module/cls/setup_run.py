"""Builds the run's accelerator."""
from accelerate import Accelerator


def make_accelerator(mixed_precision="no"):
    """Debug runs of this project train on the host."""
    return Accelerator(cpu=True, mixed_precision=mixed_precision)
