"""A while loop clips after stepping."""
import torch

opt = torch.optim.Adam(model.parameters())
it = 0
while it < max_iters:
    opt.zero_grad()
    model(next(data)).mean().backward()
    opt.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: SF406
    it += 1
