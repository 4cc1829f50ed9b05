"""K-fold cross-validation: one Lightning Trainer.fit per fold, the model deleted and the cache flushed between folds."""
import gc

import torch
import lightning as L


def cross_validate(make_module, make_datamodule, k=5, max_epochs=10):
    scores = []
    for fold in range(k):
        module = make_module()
        trainer = L.Trainer(max_epochs=max_epochs, accelerator="gpu", devices=1)
        trainer.fit(module, datamodule=make_datamodule(fold))
        scores.append(trainer.callback_metrics["val_acc"].item())
        del module, trainer
        gc.collect()
        torch.cuda.empty_cache()
    return sum(scores) / k
