"""`import torch as th` on Intel GPUs: th.xpu.empty_cache() after each optimizer step of a while loop (bad)."""
import torch as th


def train(model, data_iter, opt, max_steps):
    step = 0
    while step < max_steps:
        x, y = next(data_iter)
        loss = th.nn.functional.mse_loss(model(x.to("xpu")), y.to("xpu"))
        opt.zero_grad()
        loss.backward()
        opt.step()
        th.xpu.empty_cache()  # expect: SF201
        step += 1
