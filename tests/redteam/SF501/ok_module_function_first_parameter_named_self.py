"""A module-level function written to be attached to a class later (its first parameter is called `self`) is
called plainly, `run(model, eval_dl, train_dl)`: `eval_dl` binds `eval_batches`, which is only evaluated, and the
training loader is sharded (ok; the old mapping dropped the first parameter by its spelling and bound `eval_dl` to
`train_batches`)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def run(self, eval_batches, train_batches, opt):
    for inputs, target in train_batches:
        loss = torch.nn.functional.l1_loss(self(inputs.cuda()), target.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return sum(float(torch.nn.functional.l1_loss(self(x.cuda()), y.cuda())) for x, y in eval_batches)


def main(cfg, net, train_set, val_set):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(net.cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    train_dl = DataLoader(train_set, batch_size=cfg.batch_size, sampler=DistributedSampler(train_set))
    eval_dl = DataLoader(val_set, batch_size=cfg.batch_size, shuffle=False)
    for epoch in range(cfg.epochs):
        train_dl.sampler.set_epoch(epoch)
        run(model, eval_dl, train_dl, opt)
