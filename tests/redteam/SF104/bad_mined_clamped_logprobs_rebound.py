"""Mined shape: a policy-gradient step binds `log_probs = F.log_softmax(shift_logits, dim=-1)`, rebinds it through
`torch.clamp(log_probs, min=-100.0)` "for stability", then gathers the generated tokens (bad: two full [B, L, V]
tensors, the log-probs and their clamp)."""
import torch
import torch.nn.functional as F


def policy_step(model, prompt_ids, response_ids, advantages, optimizer):
    sequences = torch.cat([prompt_ids, response_ids], dim=1)
    logits = model(sequences).logits
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = sequences[..., 1:].contiguous()
    log_probs = F.log_softmax(shift_logits, dim=-1)
    log_probs = torch.clamp(log_probs, min=-100.0)
    token_log_probs = torch.gather(log_probs, 2, shift_labels.unsqueeze(2)).squeeze(2)  # expect: SF104
    mask = torch.zeros_like(token_log_probs)
    mask[:, prompt_ids.shape[1] - 1:] = 1
    loss = -(advantages[:, None] * token_log_probs * mask).sum() / mask.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
