"""The schedule reaches the loop as a parameter `sched`; the file's own call shows it is a OneCycleLR."""
import torch
from torch.optim import lr_scheduler as lrs


def inner_loop(net, data, opt, sched, n):
    for k, (x, y) in enumerate(data):
        (torch.nn.functional.cross_entropy(net(x), y) / n).backward()
        sched.step()  # expect: SF418
        if (k + 1) % n == 0:
            opt.step()
            opt.zero_grad()


def main(net, data, steps):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    inner_loop(net, data, opt, lrs.OneCycleLR(opt, max_lr=0.1, total_steps=steps), 8)
