"""A trainer's resume method passes strict positionally and drops the result."""
import torch


class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def resume(self, path):
        blob = torch.load(path, map_location="cpu")
        self.net.load_state_dict(blob["net"], False)  # expect: SF412
        self.opt.load_state_dict(blob["opt"])
        return blob["step"]
