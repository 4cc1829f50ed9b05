"""The file's own loader strips the prefix with torch's helper: the format is known."""
import torch
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present


def save(model, path):
    model = nn.DataParallel(model)
    torch.save(model.state_dict(), path)


def load(model, path):
    state = torch.load(path, map_location="cpu")
    consume_prefix_in_state_dict_if_present(state, "module.")
    model.load_state_dict(state)
