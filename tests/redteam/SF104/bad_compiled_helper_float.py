import torch


@torch.compile
def gather_logprobs(logits, labels):
    log_probs = torch.nn.functional.log_softmax(logits.float(), dim=-1)
    return log_probs.gather(dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)  # expect: SF104
