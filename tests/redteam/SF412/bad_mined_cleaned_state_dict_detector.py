"""Mined (open-vocabulary detector wrapper): keys cleaned by a helper, then loaded with strict=False."""
import torch


class Detector:
    def __init__(self, device):
        self.device = device

    def load(self, build, cfg, checkpoint_path, clean):
        net = build(cfg)
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        net.load_state_dict(clean(checkpoint["model"]), strict=False)  # expect: SF412
        net.eval()
        return net.to(self.device)
