"""A runner whose methods call the instance `this` prepares only the model with accelerate and saves it in a
method through a local name: the keys carry `module.` under several processes (bad: the receiver is not `self`)."""
import torch
from accelerate import Accelerator


class Runner:
    def __init__(this, net, opt):
        this.acc = Accelerator()
        this.net = this.acc.prepare(net)
        this.opt = opt

    def step(this, x, y):
        loss = torch.nn.functional.mse_loss(this.net(x), y)
        this.acc.backward(loss)
        this.opt.step()

    def save(this, path):
        state = this.net.state_dict()  # expect: SF505
        torch.save(state, path)
