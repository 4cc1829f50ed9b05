"""Step every iteration; the modulo only gates logging and checkpointing (not accumulation)."""
import torch

opt = torch.optim.Adam(model.parameters())
for step, (x, y) in enumerate(loader):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 500 == 0:
        torch.save(model.state_dict(), "ckpt.pt")
