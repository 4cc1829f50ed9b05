"""Self-training trainer storing detached rows of a GPU batch per id from `zip(ids, feats.detach())`, never moved to the CPU nor cleared (bad)."""
import torch
import torch.nn.functional as F


class SelfTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.memory = {}

    def step(self, ids, x, y):
        feats, logits = self.model(x.cuda())
        loss = F.cross_entropy(logits, y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for sid, row in zip(ids.tolist(), feats.detach()):
            self.memory[sid] = row  # expect: SF102
        return loss.item()
