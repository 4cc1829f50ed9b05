"""The teacher is evaluated every step but never trained; the student is."""
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, opt):
    student.train()
    for x, _ in loader:
        teacher.eval()
        with torch.no_grad():
            target = teacher(x)
        opt.zero_grad()
        F.mse_loss(student(x), target).backward()
        opt.step()
