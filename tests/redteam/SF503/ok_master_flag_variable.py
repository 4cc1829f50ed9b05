"""A master flag computed once from the global rank guards every write."""
import torch
import torch.distributed as dist


def main(model, loader, opt, path):
    dist.init_process_group("nccl")
    master_process = dist.get_rank() == 0
    model = torch.nn.parallel.DistributedDataParallel(model)
    if master_process:
        log = open(path + ".log", "a")
    for x in loader:
        model(x).sum().backward()
        opt.step()
    if master_process:
        torch.save(model.module.state_dict(), path)
