"""HF Trainer.compute_loss override with the same gc.collect()/empty_cache() pair before and after the forward (duplicate per-step cleanup, bad)."""
import gc

import torch
from transformers import Trainer


class MemoryHungryTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        gc.collect()
        torch.cuda.empty_cache()  # expect: SF201
        outputs = model(**inputs)
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        gc.collect()
        torch.cuda.empty_cache()  # expect: SF201
        return (loss, outputs) if return_outputs else loss
