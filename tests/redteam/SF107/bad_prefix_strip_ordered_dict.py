"""Strip the DataParallel prefix into an OrderedDict, then load (a very common snippet)."""
from collections import OrderedDict

import torch


def load_dp_weights(net, weights):
    raw = torch.load(weights)  # expect: SF107
    cleaned = OrderedDict()
    for key, value in raw.items():
        cleaned[key.replace("module.", "")] = value
    net.load_state_dict(cleaned)
    return net
