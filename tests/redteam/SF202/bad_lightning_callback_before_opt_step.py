"""Lightning callback testing each gradient with isfinite().all() before every optimizer step (bad)."""
import lightning.pytorch as pl
import torch


class SkipOnBadGrad(pl.Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        offenders = []
        for layer_name, tensor in pl_module.named_parameters():
            if tensor.grad is not None and not torch.isfinite(tensor.grad).all():  # expect: SF202
                offenders.append(layer_name)
        if offenders:
            optimizer.zero_grad()
