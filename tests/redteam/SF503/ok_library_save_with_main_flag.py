"""A library save method that takes is_main_process and leaves the process choice to its caller."""
import os

import torch
from accelerate import Accelerator


class Exportable(torch.nn.Module):
    def save_pretrained(self, directory, is_main_process=True):
        if is_main_process:
            os.makedirs(directory, exist_ok=True)
        torch.save(self.state_dict(), os.path.join(directory, "weights.bin"))


def main(model):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    accelerator.unwrap_model(model).save_pretrained("out", is_main_process=accelerator.is_main_process)
