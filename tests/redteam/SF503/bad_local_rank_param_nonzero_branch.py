"""mp.spawn worker: the save is in the branch the non-zero ranks take."""
import torch
import torch.multiprocessing as mp


def worker(rank, world_size, model, path):
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world_size)
    model = torch.nn.parallel.DistributedDataParallel(model)
    if rank != 0:
        torch.save(model.module.state_dict(), path)  # expect: SF503
    else:
        print("rank 0 idles")


if __name__ == "__main__":
    mp.spawn(worker, args=(2, None, "w.pt"), nprocs=2)
