"""Mined (RL actor terminal-value metrics): RMSE over the target's RMS plus 1e-8, logged with `.item()`."""
import torch


def terminal_metrics(pred, target):
    rmse = (pred - target).pow(2).mean().sqrt()
    target_rms = target.pow(2).mean().sqrt()
    return {
        "rmse": rmse.item(),
        "rmse_over_target_rms": (rmse / (target_rms + 1e-8)).item(),  # expect: SF304
    }
