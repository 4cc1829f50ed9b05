"""Built once, before the loop."""
import torch

opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for batch in loader:
    opt.zero_grad()
    model(batch).mean().backward()
    opt.step()
