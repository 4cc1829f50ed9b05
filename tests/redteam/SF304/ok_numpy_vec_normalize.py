"""numpy running-variance reward normalisation (ok)."""
import numpy as np


def normalize_reward(reward, ret_var):
    return np.clip(reward / np.sqrt(ret_var + 1e-8), -10.0, 10.0)
