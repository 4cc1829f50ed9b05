"""What a helper of another module returns is unknown: it may be a module."""
from models import build_encoder


def setup(cfg, device):
    encoder = build_encoder(cfg)
    encoder.to(device)
    encoder.float()
    return encoder
