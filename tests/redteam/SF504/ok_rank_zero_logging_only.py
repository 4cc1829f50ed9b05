"""wait_for_everyone outside the main-process branch, which only logs and saves."""

import torch
from accelerate import Accelerator

accelerator = Accelerator()


def end_epoch(model, epoch, metrics):
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        print(epoch, metrics)
        accelerator.save(accelerator.unwrap_model(model).state_dict(), f"epoch{epoch}.pt")
