"""A helper that verifies downloaded bytes and returns the checkpoint; the caller restores the model."""
import hashlib
import io

import torch


def fetch_checkpoint(path, sha256):
    blob = open(path, "rb").read()
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise RuntimeError("checksum mismatch")
    return torch.load(io.BytesIO(blob))  # expect: SF107


def build(model, path, sha256):
    checkpoint = fetch_checkpoint(path, sha256)
    model.load_state_dict(checkpoint["model_state_dict"])
    return model
