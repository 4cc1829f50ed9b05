"""REINFORCE on sequences: sampled tokens and their log-probs build the policy-gradient loss (ok)."""
import torch

policy.train()
for step, prompt in enumerate(prompts):
    tok = prompt
    logps = []
    for _ in range(16):
        dist = torch.distributions.Categorical(logits=policy(tok)[:, -1])
        nxt = dist.sample()
        logps.append(dist.log_prob(nxt))
        tok = torch.cat([tok, nxt[:, None]], 1)
    reward = score(tok)
    loss = -(torch.stack(logps, 1).sum(1) * reward).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
