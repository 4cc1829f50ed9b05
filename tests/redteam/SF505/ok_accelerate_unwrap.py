"""accelerate unwraps before saving."""
from accelerate import Accelerator

accelerator = Accelerator()


def save(model, optimizer, path):
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    accelerator.save(unwrapped.state_dict(), path)
