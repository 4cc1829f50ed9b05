"""Mined (forecasting script): `_orig_mod.` and `module.` prefixes replaced, then a loose load."""
import logging

import torch

logger = logging.getLogger(__name__)


def restore(net, path):
    checkpoint = torch.load(path, map_location="cpu")
    weights = checkpoint.get("state_dict", checkpoint)
    weights = {k.replace("_orig_mod.", ""): v for k, v in weights.items()}
    weights = {k.replace("module.", ""): v for k, v in weights.items()}
    net.load_state_dict(weights, strict=False)  # expect: SF412
    net.eval()
    logger.info("restored")
    return net
