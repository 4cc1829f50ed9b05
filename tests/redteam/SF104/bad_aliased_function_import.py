"""from-imports under aliases: pick(lsm(out, 1), 1, y) (bad)."""
from torch import gather as pick
from torch.nn.functional import log_softmax as lsm


def nll(out, y):
    return -pick(lsm(out, 1), 1, y.view(-1, 1)).mean()  # expect: SF104
