"""HF TrainerCallback checking every gradient for NaN/Inf before each step: one sync per parameter (bad)."""
import torch
from transformers import TrainerCallback


class GradientNaNWatch(TrainerCallback):
    """Looks at every gradient before each step (pattern seen in public fine-tuning repos)."""

    def on_step_begin(self, args, state, control, **kwargs):
        net = kwargs["model"]
        for pname, weight in net.named_parameters():
            if weight.grad is None:
                continue
            if torch.isnan(weight.grad).any():  # expect: SF202
                print(f"nan grad in {pname}")
            elif torch.isinf(weight.grad).any():  # expect: SF202
                print(f"inf grad in {pname}")
