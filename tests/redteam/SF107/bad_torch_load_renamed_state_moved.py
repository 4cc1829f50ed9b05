"""`from torch import load as restore`, and nothing else in the file spells "load": the checkpoint lands where it
was saved from, then every tensor is moved to the GPU anyway (bad; the gate once asked for a call spelling "load")."""
import torch
from torch import load as restore


def resume(path):
    state = restore(path)  # expect: SF107
    return {key: value.to("cuda") for key, value in state.items()}
