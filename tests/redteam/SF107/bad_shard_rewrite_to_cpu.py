"""Conversion script: rewrite each shard with CPU copies of its tensors."""
import os

import torch


def rewrite_shards(output_dir, shard_files):
    for shard_file in shard_files:
        shard = torch.load(os.path.join(output_dir, shard_file))  # expect: SF107
        torch.save({name: t.cpu().clone() for name, t in shard.items()}, os.path.join(output_dir, shard_file + ".cpu"))
