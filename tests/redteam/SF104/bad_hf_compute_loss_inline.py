"""HF Trainer.compute_loss: inline log_softmax of sliced logits as torch.gather's source (bad)."""
import torch
import torch.nn.functional as F
from transformers import Trainer


class TokenTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        token_lp = torch.gather(F.log_softmax(outputs.logits[:, :-1], dim=-1), -1, inputs["input_ids"][:, 1:, None])  # expect: SF104
        loss = -token_lp.mean()
        return (loss, outputs) if return_outputs else loss
