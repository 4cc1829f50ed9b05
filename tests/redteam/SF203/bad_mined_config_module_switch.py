"""Mined shape (cross-file in the original): a config module switches anomaly detection on at import; the loss module imports it and the training script imports the loss (bad; this file alone runs no training)."""
import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.autograd.set_detect_anomaly(True)  # expect: SF203
IMAGE_SIZE = 416
GRID = 13
