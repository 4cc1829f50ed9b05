"""The norm is measured after the step with an infinite limit (a no-op clip), for logging only."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
    model(batch).mean().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    optimizer.zero_grad()
