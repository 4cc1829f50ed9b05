"""A project whose `set_seed` helper only makes cuDNN deterministic."""
