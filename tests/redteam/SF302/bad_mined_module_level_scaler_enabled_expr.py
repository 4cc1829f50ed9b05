"""Mined (small GPT trainer script): module-level legacy scaler enabled by a comparison on a dtype string."""
import torch

precision = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
grad_scaler = torch.cuda.amp.GradScaler(enabled=(precision == "float16"))  # expect: SF302
