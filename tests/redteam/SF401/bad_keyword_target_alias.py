"""Distillation helper passing `target=` an alias of the student's features (`teacher_feats = student_feats.detach()`) to a loss module (bad)."""
import torch
import torch.nn as nn


class FeatureKD(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.SmoothL1Loss()

    def forward(self, student, teacher, x):
        student_feats = student.features(x)
        with torch.no_grad():
            _ = teacher.features(x)
        teacher_feats = student_feats.detach()
        return self.criterion(input=student_feats, target=teacher_feats)  # expect: SF401
