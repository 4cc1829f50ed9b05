"""DDP worker resuming from the checkpoint rank 0 wrote: every rank loads onto cuda:0 first."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(build_model, build_opt, ckpt_dir):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = build_model().cuda(rank)
    optimizer = build_opt(model.parameters())
    path = os.path.join(ckpt_dir, "latest.pth")
    start_epoch = 0
    if os.path.exists(path):
        checkpoint = torch.load(path)  # expect: SF107
        model.load_state_dict(checkpoint["model_state"])
        optimizer.load_state_dict(checkpoint["optim_state"])
        start_epoch = checkpoint["epoch"] + 1
    model = DDP(model, device_ids=[rank])
    return model, optimizer, start_epoch
