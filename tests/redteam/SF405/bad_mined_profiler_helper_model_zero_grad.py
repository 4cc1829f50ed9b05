"""Mined (LM memory profiler): module-level AdamW over the model; a helper whose parameter shadows the global model clears it with `model.zero_grad()` between backward and step."""
import torch
import torch.nn.functional as F

lm = torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 100))
optimizer = torch.optim.AdamW(lm.parameters())
tokens = torch.randint(0, 100, (4, 16))
targets = torch.randint(0, 100, (4, 16))


def run_model(lm, tokens, targets, mode):
    out = lm(tokens)
    if mode == "fb":
        loss = F.cross_entropy(out.view(-1, 100), targets.view(-1))
        loss.backward()
        lm.zero_grad()  # expect: SF405
        optimizer.step()


for _ in range(5):
    run_model(lm, tokens, targets, "fb")
