"""Sensor features kept per reading source: `device_id` is the sensor a sample came from (a column of the
batch), not a torch device, so the table gains an accelerator tensor per new sensor (bad; the key's spelling
mentions "device", which the old test took for a per-device memo)."""
import torch


class SensorBank:
    def __init__(self, encoder):
        self.encoder = encoder
        self.latest = {}

    @torch.no_grad()
    def observe(self, device_id, signal):
        feat = self.encoder(signal.cuda())
        self.latest[device_id] = feat.detach()  # expect: SF102
        return feat

    def lookup(self, device_id):
        return self.latest[device_id]


def train(loader, encoder, model, optimizer):
    bank = SensorBank(encoder)
    for batch in loader:
        feat = bank.observe(batch["device_id"], batch["signal"])
        loss = model(feat).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
