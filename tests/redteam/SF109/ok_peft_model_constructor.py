"""A PeftModel built directly (not via get_peft_model): peft still freezes the base."""
import torch
from peft import LoraConfig, PeftModel


def build(base):
    model = PeftModel(base, LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, optimizer
