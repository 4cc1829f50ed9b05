"""Hugging Face gradient checkpointing with the non-reentrant implementation, then LoRA."""
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m")
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model = get_peft_model(model, LoraConfig(r=16, target_modules=["q_proj", "v_proj"]))
