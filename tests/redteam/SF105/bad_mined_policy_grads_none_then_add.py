"""Mined shape: a reward-weighted probe backpropagates one loss per sampled answer, stores the first flattened
gradient in `policy_grads` (initially None) and adds every later one into it, then compares it with the reference
gradient by cosine similarity (bad: a flat model-sized sum on the accelerator across the answers)."""
import torch
import torch.nn.functional as F


def reward_weighted_gradient(model, samples, rewards):
    policy_grads = None
    for sample, reward in zip(samples, rewards):
        loss = model(**sample).loss * reward
        loss.backward()
        if policy_grads is None:
            policy_grads = torch.cat([p.grad.view(-1) for p in model.parameters() if p.grad is not None])
        else:
            policy_grads += torch.cat([p.grad.view(-1) for p in model.parameters() if p.grad is not None])  # expect: SF105
        model.zero_grad()
    return policy_grads


def alignment(model, samples, rewards, reference):
    policy_grads = reward_weighted_gradient(model, samples, rewards)
    return F.cosine_similarity(policy_grads, reference, dim=0).item()
