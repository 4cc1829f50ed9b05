"""A dict written in the code replaces the loaded checkpoint only when a flag is set (a one-line `if`): without the
flag the whole file is loaded loosely and nothing checks its keys."""
import torch


def load_encoder(encoder, path, shared_only):
    state = torch.load(path, map_location="cpu")
    if shared_only: state = {"embedding.weight": state["embedding.weight"]}
    encoder.load_state_dict(state, strict=False)  # expect: SF412
    return encoder
