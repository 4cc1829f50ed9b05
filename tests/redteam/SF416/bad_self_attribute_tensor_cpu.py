"""A metric tracker whose running sum (a tensor attribute) is sent to the CPU by a discarded statement before saving."""
import torch


class RunningMean:
    def __init__(self, dim, device):
        self.total = torch.zeros(dim, device=device)
        self.count = 0

    def update(self, x):
        self.total += x.sum(0)
        self.count += x.size(0)

    def save(self, path):
        self.total.cpu()  # expect: SF416
        torch.save({"total": self.total, "count": self.count}, path)
