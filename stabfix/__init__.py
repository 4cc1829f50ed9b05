"""stabfix: find, fix and verify PyTorch training anti-patterns."""

__version__ = "0.1.0"
