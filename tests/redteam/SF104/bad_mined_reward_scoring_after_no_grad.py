"""Mined shape: a preference-reward scorer runs the LM under no_grad, then outside it slices the logits, takes
`logits.log_softmax(dim=-1).gather(2, ...)` of the shifted ids and masks from each answer's start (bad: a full
[B, L, V] log-prob tensor per scored batch)."""
import torch


def answer_scores(llm, input_ids, attention_mask, answer_starts, beta=2.5):
    with torch.no_grad():
        logits = llm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    logits = logits[:, :-1, :]
    target_ids = input_ids[:, 1:]
    token_log_probs = logits.log_softmax(dim=-1).gather(2, target_ids.unsqueeze(-1)).squeeze(-1)  # expect: SF104
    positions = torch.arange(target_ids.size(1), device=input_ids.device).expand_as(target_ids)
    mask = (positions >= answer_starts.unsqueeze(1)) * attention_mask[:, 1:]
    return beta * (token_log_probs * mask).sum(-1) / mask.sum(-1)
