"""Mmcv style hook (must stay silent)."""
import torch


class DetectAnomalyHook:
    """Opt-in hook: add it to the config while debugging."""

    def before_train_iter(self, runner):
        torch.autograd.set_detect_anomaly(True)

    def after_train_iter(self, runner):
        torch.autograd.set_detect_anomaly(False)
