"""Distillation with `nn.KLDivLoss`: the student side is `F.softmax`, not `F.log_softmax` (bad)."""
import torch.nn as nn
import torch.nn.functional as F


class Distiller:
    def __init__(self, student, teacher, T=3.0):
        self.student = student
        self.teacher = teacher
        self.T = T
        self.kl = nn.KLDivLoss(reduction="batchmean")

    def loss(self, x):
        s = F.softmax(self.student(x) / self.T, dim=1)
        t = F.softmax(self.teacher(x).detach() / self.T, dim=1)
        return self.kl(s, t) * self.T**2  # expect: SF410
