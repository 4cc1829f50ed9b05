"""A Lightning checkpoint read with an aliased loader; only its `state_dict` entry is used."""
import torch

load_fn = torch.load


def warm_start(model, ckpt_path):
    ckpt = load_fn(ckpt_path)  # expect: SF107
    weights = {k.partition("model.")[2]: v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
    missing, unexpected = model.load_state_dict(weights, strict=False)
    return missing, unexpected
