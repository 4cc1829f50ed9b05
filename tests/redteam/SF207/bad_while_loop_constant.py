"""A while-loop trainer moving a module-level mask every iteration."""
import torch

CAUSAL = torch.triu(torch.ones(16, 16), diagonal=1).bool()


def train(model, batches, optimizer, device, steps):
    step = 0
    while step < steps:
        x = next(batches).to(device)
        out = model(x, attn_mask=CAUSAL.to(device))  # expect: SF207
        loss = out.float().pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
