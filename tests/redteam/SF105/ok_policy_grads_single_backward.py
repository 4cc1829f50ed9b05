"""Near miss: the reward-weighted losses are summed and backpropagated once, so the flattened gradient is copied
from a single pass (legitimate)."""
import torch
import torch.nn.functional as F


def alignment(model, samples, rewards, reference):
    loss = sum(model(**sample).loss * reward for sample, reward in zip(samples, rewards))
    loss.backward()
    policy_grads = torch.cat([p.grad.view(-1) for p in model.parameters() if p.grad is not None])
    model.zero_grad()
    return F.cosine_similarity(policy_grads, reference, dim=0).item()
