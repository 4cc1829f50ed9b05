"""The rank test guards a print; the save sits after the if, on every rank."""
import torch
import torch.distributed as dist


def finish(model, path):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    if dist.get_rank() == 0:
        print(f"saving to {path}")
    torch.save(model.module.state_dict(), path)  # expect: SF503
