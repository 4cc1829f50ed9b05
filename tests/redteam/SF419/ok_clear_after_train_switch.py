"""The probe's gradients are cleared right after switching back to train mode, before any training pass."""
import torch

model.eval()
probe = model(sample_x).pow(2).mean()
probe.backward()
print("initial grad", model.head.weight.grad.norm())
model.train()
opt.zero_grad(set_to_none=True)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
