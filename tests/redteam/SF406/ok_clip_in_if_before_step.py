"""The optional clip is behind an if, before the step."""
import torch

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in loader:
    optimizer.zero_grad()
    model(batch).mean().backward()
    if args.max_norm:
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
    optimizer.step()
