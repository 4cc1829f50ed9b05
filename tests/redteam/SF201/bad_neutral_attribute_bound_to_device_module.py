"""Trainer keeping the device module in `self.mem = getattr(torch, device_type)` and emptying its cache after every
optimizer step: the attribute holds `torch.cuda` whatever it is called (bad; the old test only knew a handle by
a device-like name)."""
import torch


class Trainer:
    def __init__(self, model, optimizer, device_type="cuda"):
        self.model = model.to(device_type)
        self.optimizer = optimizer
        self.device_type = device_type
        self.mem = getattr(torch, device_type)

    def fit(self, loader):
        for inputs, labels in loader:
            inputs, labels = inputs.to(self.device_type), labels.to(self.device_type)
            loss = torch.nn.functional.cross_entropy(self.model(inputs), labels)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.mem.empty_cache()  # expect: SF201
