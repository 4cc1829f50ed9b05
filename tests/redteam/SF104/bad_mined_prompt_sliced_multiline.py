"""Mined shape: after slicing off the prompt, a gather spread over three lines picks each label's entry from `logits.log_softmax(-1)` (bad)."""
import torch


def completion_logprob(logits, labels, prompt_len, pad_id):
    labels = labels[:, prompt_len + 1:].clone()
    logits = logits[:, prompt_len:-1, :]
    keep = labels != pad_id
    chosen = torch.gather(  # expect: SF104
        logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)  # expect: SF104
    ).squeeze(2)
    return (chosen * keep).sum(-1)
