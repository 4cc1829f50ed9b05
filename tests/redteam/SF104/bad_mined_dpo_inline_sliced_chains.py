"""Mined shape: a DPO loop computes each sequence log-prob inline as
`logits[:, :-1, :].log_softmax(dim=-1).gather(2, ids[:, 1:].unsqueeze(-1)).squeeze(-1).sum(-1)` for the policy's
chosen and rejected answers (bad: two full [B, L, V] log-prob tensors and their gradients per step)."""
import torch
import torch.nn.functional as F


def train(policy, reference, loader, optimizer, beta=0.1):
    for chosen_ids, rejected_ids in loader:
        chosen_logits = policy(chosen_ids).logits
        rejected_logits = policy(rejected_ids).logits
        chosen = chosen_logits[:, :-1, :].log_softmax(dim=-1).gather(2, chosen_ids[:, 1:].unsqueeze(-1)).squeeze(-1).sum(-1)  # expect: SF104
        rejected = rejected_logits[:, :-1, :].log_softmax(dim=-1).gather(2, rejected_ids[:, 1:].unsqueeze(-1)).squeeze(-1).sum(-1)  # expect: SF104
        with torch.no_grad():
            ref_margin = reference(chosen_ids).score - reference(rejected_ids).score
        loss = -F.logsigmoid(beta * (chosen - rejected - ref_margin)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
