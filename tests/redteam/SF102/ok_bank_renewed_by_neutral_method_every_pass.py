"""A feature bank re-created by `renew()`, which the training loop calls on every pass: the dict never holds more
than one pass's entries, whatever the method is called (ok; the old test knew a per-step reset only by words such
as `reset`/`clear`/`step` in the method's name)."""
import torch


class FeatureBank:
    def __init__(self, encoder):
        self.encoder = encoder
        self.renew()

    def renew(self):
        self.bank = {}

    @torch.no_grad()
    def add(self, ids, x):
        feats = self.encoder(x)
        for i, row in zip(ids.tolist(), feats):
            self.bank[i] = row.detach()
        return feats

    def lookup(self, i):
        return self.bank[i]


def train(encoder, model, loader, optimizer):
    bank = FeatureBank(encoder)
    for ids, x in loader:
        bank.renew()
        feats = bank.add(ids, x.cuda())
        loss = model(feats).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
