"""Each rank writes its own shard, named by its rank."""
import os

import torch
import torch.distributed as dist


def dump(features, out_dir):
    dist.init_process_group("nccl")
    rank = int(os.environ["RANK"])
    torch.save(features, os.path.join(out_dir, f"features_rank{rank}.pt"))
    with open(os.path.join(out_dir, "log_%d.txt" % dist.get_rank()), "w") as f:
        f.write("done")
