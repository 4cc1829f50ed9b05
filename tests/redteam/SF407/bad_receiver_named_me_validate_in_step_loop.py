"""A runner whose methods call the instance `me` switches the model to eval in its `validate` method and calls
`me.validate()` every few steps of the training loop, never switching back to train (bad: the receiver is
not `self`)."""
import torch


class Runner:
    def __init__(me, net, opt, batches, held_out):
        me.net = net
        me.opt = opt
        me.batches = batches
        me.held_out = held_out

    def validate(me):
        me.net.eval()
        with torch.no_grad():
            return sum(me.net(x).abs().mean().item() for x in me.held_out)

    def train(me, steps):
        me.net.train()
        for i in range(steps):
            loss = me.net(next(me.batches)).square().mean()
            me.opt.zero_grad()
            loss.backward()
            me.opt.step()
            if i % 50 == 0:
                me.validate()  # expect: SF407
