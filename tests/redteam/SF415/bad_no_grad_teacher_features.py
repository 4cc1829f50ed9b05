"""Distillation: teacher features computed under no_grad feed a checkpointed student adapter (use_reentrant=True)."""
import torch
import torch.utils.checkpoint


def student_step(teacher, adapter, images):
    with torch.no_grad():
        t_feats = teacher(images)
    return torch.utils.checkpoint.checkpoint(adapter, t_feats, use_reentrant=True)  # expect: SF415
