"""DPO-style preference loss (`-F.logsigmoid(...).mean()`), accumulated over micro-batches (bad)."""
import torch
import torch.nn.functional as F


def dpo_train(policy, ref_logratios, batches, optimizer, beta, grad_accum):
    for n, batch in enumerate(batches):
        pi_logratios = policy.logratios(batch)
        loss = -F.logsigmoid(beta * (pi_logratios - ref_logratios[n])).mean()
        loss.backward()  # expect: SF411
        if (n + 1) % grad_accum == 0:
            optimizer.step()
            optimizer.zero_grad()
