"""Probabilities written as `exp` of a log-softmax through aliased imports, then `F.cross_entropy` (bad)."""
from torch import exp as texp
from torch.nn.functional import cross_entropy, log_softmax


def train_epoch(net, batches, opt):
    for x, y in batches:
        scores = texp(log_softmax(net(x), dim=-1))
        loss = cross_entropy(scores, y)  # expect: SF410
        opt.zero_grad()
        loss.backward()
        opt.step()
