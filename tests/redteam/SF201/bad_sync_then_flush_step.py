"""RLHF reward-model step that synchronizes and flushes the allocator on every call (bad)."""
import torch
import torch.nn.functional as F


def reward_model_step(rm, optimizer, chosen, rejected):
    r_chosen = rm(**chosen).logits.squeeze(-1)
    r_rejected = rm(**rejected).logits.squeeze(-1)
    loss = -F.logsigmoid(r_chosen - r_rejected).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # expect: SF201
    return loss.item()


def train(rm, optimizer, pairs):
    for chosen, rejected in pairs:
        reward_model_step(rm, optimizer, chosen, rejected)
