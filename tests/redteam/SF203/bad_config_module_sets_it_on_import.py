"""Config module sets it on import (must be reported)."""
import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.autograd.set_detect_anomaly(True)  # expect: SF203
LEARNING_RATE = 2e-5
BATCH_SIZE = 16
