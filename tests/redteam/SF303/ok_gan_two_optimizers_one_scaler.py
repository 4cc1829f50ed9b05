"""One scaler, two optimizers: each unscaled before its own clip."""
import torch

scaler = torch.amp.GradScaler("cuda")
for real in loader:
    opt_d.zero_grad(set_to_none=True)
    opt_g.zero_grad(set_to_none=True)
    with torch.autocast("cuda"):
        d_loss = critic_loss(D, G, real)
    scaler.scale(d_loss).backward()
    scaler.unscale_(opt_d)
    torch.nn.utils.clip_grad_norm_(D.parameters(), 1.0)
    scaler.step(opt_d)
    with torch.autocast("cuda"):
        g_loss = generator_loss(D, G)
    scaler.scale(g_loss).backward()
    scaler.unscale_(opt_g)
    torch.nn.utils.clip_grad_norm_(G.parameters(), 1.0)
    scaler.step(opt_g)
    scaler.update()
