"""Mined shape: a sequence-log-prob helper unpacks `logits, _ = model(input_ids)`, clones the shifted labels to zero
the ignored positions, then gathers them from a separate `F.log_softmax(shift_logits, dim=-1)` binding (bad)."""
import torch
import torch.nn.functional as F


def sequence_log_probs(model, input_ids, labels):
    logits, _ = model(input_ids)
    shift_logits = logits[:, :-1, :].contiguous()
    shift_labels = labels[:, 1:].contiguous()
    log_probs = F.log_softmax(shift_logits, dim=-1)
    loss_mask = shift_labels != -100
    safe_labels = shift_labels.clone()
    safe_labels[~loss_mask] = 0
    per_token = torch.gather(log_probs, 2, safe_labels.unsqueeze(2)).squeeze(2)  # expect: SF104
    return (per_token * loss_mask).sum(-1)


def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    return -F.logsigmoid(beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected))).mean()
