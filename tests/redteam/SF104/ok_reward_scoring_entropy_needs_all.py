"""Near miss: the scorer needs every entry of the log-softmax (it reports the per-token entropy), so the full
tensor is the result, not waste (legitimate)."""
import torch


def answer_entropy(llm, input_ids, attention_mask):
    with torch.no_grad():
        logits = llm(input_ids=input_ids, attention_mask=attention_mask).logits
    log_probs = logits[:, :-1, :].log_softmax(dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return (entropy * attention_mask[:, 1:]).sum(-1) / attention_mask[:, 1:].sum(-1)
