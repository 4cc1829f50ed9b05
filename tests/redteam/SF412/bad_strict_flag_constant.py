"""strict comes from a module constant whose only value is False."""
import torch

LOAD_STRICT = False


def load_backbone(encoder, path):
    encoder.load_state_dict(torch.load(path, map_location="cpu"), strict=LOAD_STRICT)  # expect: SF412
    return encoder
