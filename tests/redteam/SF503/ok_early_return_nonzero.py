"""The export function returns early on every rank but 0."""
import torch
import torch.distributed as dist


def export(model, path):
    if dist.get_rank() > 0:
        return
    torch.save(model.state_dict(), path)
    with open(path + ".txt", "w") as f:
        f.write("exported")


def main(model, path):
    dist.init_process_group("nccl")
    export(torch.nn.parallel.DistributedDataParallel(model).module, path)
