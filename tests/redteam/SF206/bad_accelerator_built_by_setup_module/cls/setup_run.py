"""Builds the run's accelerator."""
from accelerate import Accelerator


def make_accelerator(mixed_precision="no"):
    return Accelerator(mixed_precision=mixed_precision)
