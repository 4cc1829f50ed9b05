"""The non-main processes return before the trainer's wait_for_everyone."""

from accelerate import Accelerator


class Trainer:
    def __init__(self, model):
        self.accelerator = Accelerator(mixed_precision="bf16")
        self.model = self.accelerator.prepare(model)

    def save(self, path):
        if not self.accelerator.is_main_process:
            return
        self.accelerator.wait_for_everyone()  # expect: SF504
        self.accelerator.save(self.accelerator.unwrap_model(self.model).state_dict(), path)
