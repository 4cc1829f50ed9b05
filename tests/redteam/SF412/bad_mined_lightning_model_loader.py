"""Mined (inference pipeline): a LightningModule restored from a raw checkpoint's state_dict, loosely."""
import lightning as L
import torch


class LitNet(L.LightningModule):
    def __init__(self, config):
        super().__init__()
        self.head = torch.nn.Linear(config["width"], 2)


class Pipeline:
    def __init__(self, device):
        self.device = device

    def load_model(self, config, path):
        net = LitNet(config)
        state = torch.load(path, map_location="cpu")
        net.load_state_dict(state["state_dict"], strict=False)  # expect: SF412
        net.eval()
        net.to(self.device)
        return net
