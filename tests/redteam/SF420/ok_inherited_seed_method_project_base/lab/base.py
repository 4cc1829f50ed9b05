"""The base runner: `prepare` seeds every generator."""
import random

import torch


class BaseRunner:
    def prepare(self, seed):
        random.seed(seed)
        torch.manual_seed(seed)
