"""Mined (masked-autoencoder utils): a loss-scaler wrapper class that holds the legacy GradScaler on self."""
import torch


class ScaledBackward:
    state_key = "amp_scaler"

    def __init__(self):
        self._inner = torch.cuda.amp.GradScaler()  # expect: SF302

    def __call__(self, loss, optimizer, max_norm=None, parameters=None):
        self._inner.scale(loss).backward()
        if max_norm is not None:
            self._inner.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(parameters, max_norm)
        self._inner.step(optimizer)
        self._inner.update()

    def state_dict(self):
        return self._inner.state_dict()
