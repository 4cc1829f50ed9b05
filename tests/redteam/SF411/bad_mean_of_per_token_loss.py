"""Language-model loop: per-token loss tensor reduced with `.mean()`, accumulated without division (bad)."""
import torch
import torch.nn.functional as F


def train_lm(model, loader, optimizer, accumulation_steps):
    for idx, (tokens, targets) in enumerate(loader):
        logits = model(tokens)
        per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
        loss = per_token.mean()
        loss.backward()  # expect: SF411
        if (idx + 1) % accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
