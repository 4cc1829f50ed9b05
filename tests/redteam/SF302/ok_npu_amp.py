"""Ascend NPU's own amp module is not torch.cuda.amp."""
import torch
import torch_npu


def make_scaler():
    return torch_npu.npu.amp.GradScaler()
