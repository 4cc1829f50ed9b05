"""Mined shape: a transducer's internal-LM loss method blanks the blank column in place, then calls
`.log_softmax(dim=-1).gather(index=..., dim=-1)` with keyword arguments on the (N, U, K) prediction logits (bad)."""
import torch
import torch.nn as nn


class Transducer(nn.Module):
    def __init__(self, predictor, joiner):
        super().__init__()
        self.predictor = predictor
        self.joiner = joiner

    def internal_lm_loss(self, padded_targets, lengths):
        pred_out = self.predictor(padded_targets)
        shifted = torch.roll(padded_targets, -1, dims=1)
        ilm_logit = self.joiner.prediction_only(pred_out)
        ilm_logit[:, :, 0].fill_(torch.finfo(ilm_logit.dtype).min)
        ilm_log_prob = ilm_logit.log_softmax(dim=-1).gather(index=shifted.unsqueeze(2), dim=-1).squeeze(-1)  # expect: SF104
        keep = torch.arange(padded_targets.size(1), device=padded_targets.device)[None, :] < lengths[:, None]
        ilm_log_prob = ilm_log_prob * keep
        return -ilm_log_prob.sum() / lengths.sum()
