"""Lightning callback that empties the cache at the end of each train and validation epoch (phase boundaries)."""
import gc

import torch
from lightning.pytorch.callbacks import Callback


class FreeMemoryCallback(Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        gc.collect()
        torch.cuda.empty_cache()

    def on_validation_epoch_end(self, trainer, pl_module):
        gc.collect()
        torch.cuda.empty_cache()
