"""A module-level script with tqdm around the loader and an aliased sampler import."""
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler as DSampler
from tqdm import tqdm

torch.distributed.init_process_group("nccl")
ds = torch.load("tokens.pt")
sampler = DSampler(ds)  # expect: SF502
dl = DataLoader(ds, batch_size=4, sampler=sampler)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
opt = torch.optim.Adam(model.parameters())
for epoch in range(20):
    for batch in tqdm(dl, desc=f"epoch {epoch}"):
        model(batch).sum().backward()
        opt.step()
        opt.zero_grad()
