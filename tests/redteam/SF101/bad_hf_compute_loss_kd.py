"""HF Trainer.compute_loss override for distillation: the frozen teacher's logits are flagged requires_grad before the KL target (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Trainer


class DistillTrainer(Trainer):
    def __init__(self, *args, teacher=None, temperature=2.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.teacher = teacher.eval()
        self.temperature = temperature
        self.kd = nn.KLDivLoss(reduction="batchmean")

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        with torch.no_grad():
            teacher_logits = self.teacher(**inputs).logits
        teacher_logits.requires_grad = True  # expect: SF101
        T = self.temperature
        kd_loss = self.kd(F.log_softmax(outputs.logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1)) * T * T
        loss = 0.5 * outputs.loss + 0.5 * kd_loss
        return (loss, outputs) if return_outputs else loss
