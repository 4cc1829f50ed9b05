"""A learner whose methods call the instance `this` runs one update through two of its own helpers (one runs the
backward pass, the other the optimizer step) and flushes the CUDA cache on every update (bad: the method is a
training step through `this.<helper>()` calls, whatever the receiver is named)."""
import torch


class Learner:
    def __init__(this, net, opt):
        this.net = net
        this.opt = opt

    def _grads(this, x, y):
        loss = torch.nn.functional.cross_entropy(this.net(x), y)
        loss.backward()
        return loss

    def _apply(this):
        this.opt.step()
        this.opt.zero_grad()

    def iteration(this, x, y):
        loss = this._grads(x, y)
        this._apply()
        torch.cuda.empty_cache()  # expect: SF201
        return loss.item()


def fit(learner, loader):
    for x, y in loader:
        learner.iteration(x.cuda(), y.cuda())
