"""The only raising check before the loose load tests the keys of the run's config, not of the checkpoint or
the model: the load's missing and unexpected keys are still never looked at (bad)."""
import torch


def restore(model, path, cfg):
    ckpt = torch.load(path, map_location="cpu")
    if not cfg.keys():
        raise ValueError("empty config")
    model.load_state_dict(ckpt["model"], strict=False)  # expect: SF412
    return model
