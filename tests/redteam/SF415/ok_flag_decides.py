"""use_reentrant comes from the config at run time."""
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader


def train(cfg, block, dataset):
    for x, _ in DataLoader(dataset):
        yield checkpoint(block, x, use_reentrant=cfg.reentrant)
