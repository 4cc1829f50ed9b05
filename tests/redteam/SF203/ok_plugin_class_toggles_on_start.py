"""Plugin class toggles on start (must stay silent)."""
import logging

import torch

log = logging.getLogger(__name__)


class AnomalyDetection:
    def __init__(self):
        log.info("Anomaly detection is ON: training will be slower.")
        torch.autograd.set_detect_anomaly(True)
