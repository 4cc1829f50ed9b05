"""Pipeline-style trainer stashing a detached tensor per micro-batch id and popping it in the same step (evicted right away)."""
import torch


class TwoStageTrainer:
    def __init__(self, stage1, stage2, optimizer):
        self.stage1 = stage1
        self.stage2 = stage2
        self.optimizer = optimizer
        self.pending = {}

    def step(self, micro_batches):
        for mb_id, x in micro_batches:
            with torch.no_grad():
                self.pending[mb_id] = self.stage1(x).detach()
        loss = 0.0
        for mb_id, _ in micro_batches:
            h = self.pending.pop(mb_id)
            loss = loss + self.stage2(h).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
