"""A trainer whose methods call the instance `this` keeps a memory tensor on it and hands it back to the model
on each step (`memory=this.memory`) with a backward in between and no detach (bad: the receiver is not `self`)."""
import torch


class MemoryLearner:
    def __init__(this, net, opt):
        this.net = net
        this.opt = opt
        this.memory = None

    def learn(this, batch):
        out, this.memory = this.net(batch["inputs"], memory=this.memory)  # expect: SF108
        loss = torch.nn.functional.nll_loss(out, batch["labels"])
        this.opt.zero_grad()
        loss.backward()
        this.opt.step()
