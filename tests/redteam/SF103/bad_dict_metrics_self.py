"""Trainer that keeps running totals of several loss terms in a dict on self."""
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self.totals = {"rec": 0.0, "kl": 0.0}

    def train_step(self, x):
        recon, mu, logvar = self.model(x)
        rec = F.mse_loss(recon, x)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).mean()
        loss = rec + kl
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.totals["rec"] += rec  # expect: SF103
        self.totals["kl"] += kl.detach()
