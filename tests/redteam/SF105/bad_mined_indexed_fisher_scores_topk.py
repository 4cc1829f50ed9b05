"""Mined shape: a poisoning client scores parameter importance by adding squared gradients into zeros_like buffers
by index (`scores[idx] += g ** 2` over `enumerate(model.parameters())`) for a capped number of batches, then only
flattens them to pick the top-k coordinates (bad: the scores are read once, as a model-sized copy on the device)."""
import torch


class SelectiveClient:
    def __init__(self, model, loader, criterion, optimizer, device):
        self.model = model
        self.loader = loader
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device

    def critical_coordinates(self, topk, max_batches=8):
        scores = [torch.zeros_like(p.data) for p in self.model.parameters()]  # expect: SF105
        batches = 0
        for data, target in self.loader:
            data, target = data.to(self.device), target.to(self.device)
            self.optimizer.zero_grad()
            self.criterion(self.model(data), target).backward()
            for idx, param in enumerate(self.model.parameters()):
                if param.grad is not None:
                    scores[idx] += param.grad.detach() ** 2
            batches += 1
            if batches >= max_batches:
                break
        flat = torch.cat([(s / batches).view(-1) for s in scores])
        return torch.topk(flat, topk).indices
