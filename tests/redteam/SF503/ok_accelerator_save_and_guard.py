"""accelerate: accelerator.save writes on the main process; the other writes sit under is_main_process."""
from accelerate import Accelerator


def finish(model, tokenizer, output_dir):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    accelerator.save(unwrapped.state_dict(), f"{output_dir}/pytorch_model.bin")
    unwrapped.save_pretrained(output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save)
    if accelerator.is_main_process:
        tokenizer.save_pretrained(output_dir)
