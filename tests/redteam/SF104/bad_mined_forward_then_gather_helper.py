"""Mined shape: a helper runs the policy forward, shifts logits and masked labels, and gathers from `F.log_softmax(logits, dim=-1)` to average per sequence (bad)."""
import torch
import torch.nn.functional as F


def mean_response_logp(model, batch, side):
    inputs = {"input_ids": batch[f"{side}_input_ids"], "attention_mask": batch[f"{side}_attention_mask"]}
    labels = batch[f"{side}_labels"]
    logits = model(**inputs).logits[:, :-1, :].float()
    shifted = labels[:, 1:].clone()
    valid = shifted != -100
    safe = shifted.masked_fill(~valid, 0)
    token_lp = torch.gather(F.log_softmax(logits, dim=-1), dim=-1, index=safe.unsqueeze(-1)).squeeze(-1)  # expect: SF104
    return (token_lp * valid).sum(dim=-1) / valid.sum(dim=-1).clamp_min(1)
