"""Style trainer calling its losses through a project module (`losses.swd`): the detached style features are re-marked requires_grad_ (bad)."""
import torch

from project import losses


class StyleTrainer:
    def __init__(self, net, vgg, optimizer):
        self.net = net
        self.vgg = vgg
        self.optimizer = optimizer

    def train_step(self, content, style):
        with torch.no_grad():
            style_feats = self.vgg(style)
        style_feats = style_feats.detach().requires_grad_(True)  # expect: SF101
        out = self.net(content, style)
        loss = losses.swd(self.vgg(out), style_feats)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
