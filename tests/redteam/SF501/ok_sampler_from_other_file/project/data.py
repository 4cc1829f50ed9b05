"""A project helper that builds the DistributedSampler."""
from torch.utils.data.distributed import DistributedSampler


def build_sampler(dataset, cfg):
    return DistributedSampler(dataset, shuffle=cfg.shuffle, seed=cfg.seed)
