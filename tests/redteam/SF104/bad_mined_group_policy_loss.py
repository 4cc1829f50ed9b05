"""Mined shape: a group-relative policy loss gathers next-token log-probs from a multi-line `torch.gather(F.log_softmax(logits, dim=-1), ...)` before the clipped ratio (bad)."""
import torch
import torch.nn.functional as F


def group_policy_loss(logits, input_ids, mask, old_logp, advantages, clip_eps=0.2):
    logits = logits[:, :-1, :]
    nxt = input_ids[:, 1:]
    mask = mask[:, 1:].to(logits.dtype)
    old_logp = old_logp[:, 1:]
    logp = torch.gather(  # expect: SF104
        F.log_softmax(logits, dim=-1), dim=-1, index=nxt.unsqueeze(-1)  # expect: SF104
    ).squeeze(-1)
    ratio = torch.exp(logp - old_logp)
    adv = advantages.unsqueeze(1)
    surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    return -(surrogate * mask).sum() / mask.sum()
