"""`from torch import load as restore`: the resume reads a checkpoint with `torch.load` under another name, no
`map_location`, then copies it into the model (bad; the old candidate filter only looked at calls spelling "load")."""
import torch
from torch import load as restore


def resume(model, path):
    state = restore(path)  # expect: SF107
    model.load_state_dict(state)
    return model.cuda()
