"""DeepSpeed LoRA run: the adapter is saved from every rank."""
import deepspeed
from peft import get_peft_model


def main(args, base, lora_config, loader):
    model = get_peft_model(base, lora_config)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    for batch in loader:
        engine.backward(engine(**batch).loss)
        engine.step()
    model.save_pretrained(args.adapter_dir)  # expect: SF503
