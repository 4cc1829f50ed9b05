"""accelerate loop distilling encoder features: the teacher features are detached and then re-marked requires_grad_() as the smooth-L1 target (bad)."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def main(student, teacher, loader, optimizer):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    student, teacher, optimizer, loader = accelerator.prepare(student, teacher, optimizer, loader)
    teacher.requires_grad_(False)
    for batch in loader:
        with accelerator.accumulate(student):
            pixel_values = batch["pixel_values"]
            target_feats = teacher.forward_features(pixel_values).detach().requires_grad_()  # expect: SF101
            student_feats = student.forward_features(pixel_values)
            loss = F.smooth_l1_loss(student_feats, target_feats, beta=2.0)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
