"""QLoRA via peft: prepare_model_for_kbit_training and get_peft_model freeze the base."""
import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training


def setup(model):
    model = prepare_model_for_kbit_training(model)
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    return model, optimizer
