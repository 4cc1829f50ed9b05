"""Legacy autocast with `enabled` and `dtype` passed positionally in an RL update loop."""
import torch

for update in range(num_updates):
    batch = next(rollout_iter)
    for epoch in range(ppo_epochs):
        with torch.cuda.amp.autocast(True, torch.float16):  # expect: SF301
            loss = agent.loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
