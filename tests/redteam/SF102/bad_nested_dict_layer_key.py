"""Feature-distillation trainer keeps teacher activations per layer and per sample id in a nested dict on the device (bad)."""
import torch


class LayerFeatureBank:
    def __init__(self, layers):
        self.bank = {name: {} for name in layers}

    @torch.no_grad()
    def add(self, name, sample_ids, feats):
        for sid, f in zip(sample_ids, feats):
            self.bank[name][sid] = f.clone()  # expect: SF102

    def get(self, name, sample_ids):
        return torch.stack([self.bank[name][sid] for sid in sample_ids])


def train(student, teacher, bank, loader, optimizer, layers):
    for ids, x in loader:
        with torch.no_grad():
            t_feats = teacher(x, return_layers=layers)
        for name in layers:
            bank.add(name, ids, t_feats[name])
        loss = sum(((student(x, return_layers=layers)[n] - bank.get(n, ids)) ** 2).mean() for n in layers)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
