"""Mined (audio feature extractor): the wrapped model is restored in __init__ from a checkpoint dict, loosely."""
import torch


class PitchExtractor:
    def __init__(self, make_net, weights, hop):
        net = make_net()
        blob = torch.load(weights, map_location="cpu")
        params = blob.get("model", blob)
        net.load_state_dict(params, strict=False)  # expect: SF412
        net.eval()
        self.net = net
        self.hop = hop
