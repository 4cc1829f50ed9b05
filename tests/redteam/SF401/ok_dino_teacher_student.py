"""DINO-style self-distillation: student and EMA-teacher outputs on different crops, the teacher's centred and sharpened probabilities are the target (legitimate)."""
import torch
import torch.nn.functional as F


def dino_loss(student_out, teacher_out, center, tau_s=0.1, tau_t=0.04):
    t = F.softmax((teacher_out - center) / tau_t, dim=-1)
    return torch.sum(-t * F.log_softmax(student_out / tau_s, dim=-1), dim=-1).mean()


def dino_step(student, teacher, optimizer, global_crops, local_crops, center):
    with torch.no_grad():
        teacher_out = teacher(global_crops)
    student_out = student(local_crops)
    loss = dino_loss(student_out, teacher_out.detach(), center)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
