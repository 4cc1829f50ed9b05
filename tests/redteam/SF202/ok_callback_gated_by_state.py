"""gradient NaN check in on_step_end behind an early return on the step interval (ok)."""
import torch
from transformers import TrainerCallback


class PeriodicGradCheck(TrainerCallback):
    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % 200 != 0:
            return
        for name, p in model.named_parameters():
            if p.grad is not None and torch.isnan(p.grad).any():
                print("nan", name)
