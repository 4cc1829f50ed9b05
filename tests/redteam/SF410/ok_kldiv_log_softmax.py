"""`nn.KLDivLoss` with `log_softmax` input and probability target (correct)."""
import torch.nn as nn
import torch.nn.functional as F

kl = nn.KLDivLoss(reduction="batchmean")


def kd(student_out, teacher_out, T=2.0):
    return kl(F.log_softmax(student_out / T, dim=1), F.softmax(teacher_out / T, dim=1))
