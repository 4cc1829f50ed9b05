"""mp.spawn workers each iterating the whole dataset through a SequentialSampler."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset


def run(rank, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    loader = DataLoader(data, batch_size=32, sampler=SequentialSampler(data))  # expect: SF501
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(4):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()


if __name__ == "__main__":
    mp.spawn(run, args=(4,), nprocs=4, join=True)
