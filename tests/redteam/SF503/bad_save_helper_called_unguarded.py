"""A same-file save helper called from the epoch loop on every rank."""
import torch
import torch.distributed as dist


def save_checkpoint(model, optimizer, epoch, path):
    torch.save({"model": model.state_dict(), "optim": optimizer.state_dict(), "epoch": epoch}, path)  # expect: SF503


def main(model, loader, optimizer, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
        save_checkpoint(model.module, optimizer, epoch, "last.pt")
