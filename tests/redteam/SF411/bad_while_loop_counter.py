"""`while` loop with a hand-kept iteration counter, accumulation over `accum` batches without division (bad)."""
import torch

opt = torch.optim.AdamW(model.parameters())
it = 0
data = iter(loader)
while it < max_iters:
    x, y = next(data)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()  # expect: SF411
    it += 1
    if it % accum == 0:
        opt.step()
        opt.zero_grad()
