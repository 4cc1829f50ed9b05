"""Settings: seeds every generator at import time."""
import random

import numpy as np
import torch

SEED = 99
random.seed(SEED)
np.random.seed(SEED)
torch.manual_seed(SEED)
LR = 0.01
