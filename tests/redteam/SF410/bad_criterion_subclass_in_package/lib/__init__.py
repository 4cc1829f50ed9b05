"""Shared training utilities, re-exported at the package level."""
from .objectives import WeightedCE
