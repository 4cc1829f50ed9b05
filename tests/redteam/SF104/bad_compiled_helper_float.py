"""torch.compile'd helper: log_softmax of float logits through the full torch.nn.functional path, then gather (bad)."""
import torch


@torch.compile
def gather_logprobs(logits, labels):
    log_probs = torch.nn.functional.log_softmax(logits.float(), dim=-1)
    return log_probs.gather(dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)  # expect: SF104
