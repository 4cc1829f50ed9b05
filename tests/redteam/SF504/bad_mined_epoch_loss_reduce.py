"""Paraphrase of a mined mp.spawn training script: the epoch's loss sums are all-reduced by rank 0 only,
after a barrier every rank reaches, to log them."""
import torch
import torch.distributed as dist


def train(args, encoder, rank, loader, optimizer, epoch):
    encoder.train()
    sums = torch.zeros(2).to(rank)
    for images, _ in loader:
        loss = encoder(images.to(rank)).pow(2).mean()
        sums[0] += loss.item()
        sums[1] += len(images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.barrier()
    if rank == 0:
        dist.all_reduce(sums, op=dist.ReduceOp.SUM)  # expect: SF504
        print(f"epoch {epoch} loss {sums[0] / sums[1]:.4f}")
