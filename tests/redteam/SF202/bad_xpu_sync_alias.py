"""Intel XPU barrier through an aliased torch import in a step function (bad)."""
import torch as th


def train_one_step(net, opt, x, y):
    opt.zero_grad()
    err = th.nn.functional.mse_loss(net(x.to("xpu")), y.to("xpu"))
    err.backward()
    opt.step()
    th.xpu.synchronize()  # expect: SF202
    return err.detach()
