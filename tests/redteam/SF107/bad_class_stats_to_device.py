"""A streaming LDA head restoring its class means and covariance onto its own device."""
import os

import torch


class StreamingLDA:
    def __init__(self, device):
        self.device = device
        self.means = None
        self.cov = None
        self.count = 0

    def load_model(self, save_path, save_name):
        saved = torch.load(os.path.join(save_path, save_name + ".pth"))  # expect: SF107
        self.means = saved["means"].to(self.device)
        self.cov = saved["cov"].to(self.device)
        self.count = saved["count"]
