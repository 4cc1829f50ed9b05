"""Mined (self-distillation trainer): the legacy scaler built only when an fp16 flag is set, else None."""
import torch


def build_loss_scaler(cfg):
    scaler = None
    if cfg.use_fp16:
        scaler = torch.cuda.amp.GradScaler()  # expect: SF302
    return scaler
