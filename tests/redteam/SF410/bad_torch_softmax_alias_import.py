"""Softmax imported under an alias and applied before `cross_entropy` imported from functional (bad)."""
from torch import softmax as sm
from torch.nn.functional import cross_entropy


def fit_batch(model, batch, opt):
    scores = sm(model(batch["x"]), dim=-1)
    loss = cross_entropy(scores, batch["y"])  # expect: SF410
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()
