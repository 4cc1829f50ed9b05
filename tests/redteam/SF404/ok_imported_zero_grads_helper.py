"""A probabilistic-programming loop clears the parameters' gradients with the library's helper."""
import torch
from pyro.infer.util import zero_grads


def optimise_design(loss_fn, design, optim, num_steps):
    params = None
    for step in range(num_steps):
        if params is not None:
            zero_grads(params)
        agg_loss, params = loss_fn(design)
        agg_loss.backward(retain_graph=True)
        optim.step()
