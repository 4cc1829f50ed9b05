"""Reward scaling by a running std kept on self, eps from an __init__ default (bad)."""
import torch


class RewardScaler:
    def __init__(self, eps=1e-8):
        self.eps = eps
        self.ret_std = torch.ones(())

    def update(self, returns):
        self.ret_std = returns.std()

    def __call__(self, rewards):
        return rewards / (self.ret_std + self.eps)  # expect: SF304
