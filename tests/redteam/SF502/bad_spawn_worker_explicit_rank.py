"""mp.spawn worker building the sampler with explicit replicas and rank; the epoch loop never tells it the epoch."""
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, world_size, epochs):
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True)  # expect: SF502
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, 5), nprocs=2)
