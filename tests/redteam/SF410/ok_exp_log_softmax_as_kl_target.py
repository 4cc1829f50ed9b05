"""Self-distillation: the teacher's `exp(log_softmax)` is the *target* of `kl_div`, the input is a log-softmax (correct)."""
import torch
import torch.nn.functional as F


def distill(student_logits, teacher_logits, T=3.0):
    teacher_log_p = F.log_softmax(teacher_logits / T, dim=-1)
    student_log_p = F.log_softmax(student_logits / T, dim=-1)
    return F.kl_div(student_log_p, torch.exp(teacher_log_p), reduction="batchmean") * T * T
