"""Mined (control-net builder): blocks copied from the live base network's own state dicts; the code picks the keys."""
import torch.nn as nn


class ControlNet(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv_in = nn.Conv2d(4, d, 3, padding=1)
        self.mid_block = nn.Linear(d, d)

    @classmethod
    def from_unet(cls, unet, d, load_weights=True):
        net = cls(d)
        if load_weights:
            net.conv_in.load_state_dict(unet.conv_in.state_dict(), strict=False)
            net.mid_block.load_state_dict(unet.mid_block.state_dict(), strict=False)
        return net
