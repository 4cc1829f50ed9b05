"""accelerate script ending with save_pretrained on every process (no is_main_process, no save_function)."""
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(args, train_dataloader):
    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model, train_dataloader = accelerator.prepare(model, train_dataloader)
    for batch in train_dataloader:
        accelerator.backward(model(**batch).loss)
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained(args.output_dir)  # expect: SF503
