"""Every rank truncates and writes the same training log."""
import torch
import torch.distributed as dist


def train(model, loader, opt, log_path):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    log = open(log_path, "w")  # expect: SF503
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.write(f"{step}\t{loss.item()}\n")
    log.close()
