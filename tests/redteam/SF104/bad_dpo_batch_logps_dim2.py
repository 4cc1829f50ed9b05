"""DPO batch log-probs: softmax over -1, gathered at dim=2 with an index unsqueezed there (bad)."""
import torch


def batch_logps(logits, labels, prompt_len, pad_id):
    labels = labels[:, prompt_len + 1:].clone()
    logits = logits[:, prompt_len:-1, :]
    mask = labels != pad_id
    token_lp = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)  # expect: SF104
    return (token_lp * mask).sum(-1)
