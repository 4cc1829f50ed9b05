"""Lightning callback method decorated rank_zero_only."""
import torch
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.utilities.rank_zero import rank_zero_only


class ExportBest(Callback):
    def __init__(self, path):
        self.path = path

    @rank_zero_only
    def on_train_end(self, trainer, pl_module):
        torch.save(pl_module.state_dict(), self.path)
