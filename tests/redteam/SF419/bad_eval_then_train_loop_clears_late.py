"""A sanity evaluation before training differentiates; the first training pass adds to it before its clear."""
import torch

model.eval()
probe = model(sample_x).pow(2).mean()
probe.backward()  # expect: SF419
print("initial grad", model.head.weight.grad.norm())
model.train()
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
