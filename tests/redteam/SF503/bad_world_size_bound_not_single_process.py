"""Near miss of a single-process guard: the test compares the world size with 8, so up to eight processes run the
branch and each writes the same file."""
import torch
import torch.distributed as dist


def save_small_runs(model, path):
    dist.init_process_group("nccl")
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    if dist.get_world_size() <= 8:
        torch.save(model.state_dict(), path)  # expect: SF503
