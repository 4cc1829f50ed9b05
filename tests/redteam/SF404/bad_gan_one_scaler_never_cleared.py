"""One scaler steps two optimizers that nothing else in the file names; neither is ever cleared."""
import torch

scaler = torch.amp.GradScaler("cuda")
for real in loader:
    with torch.autocast("cuda"):
        d_loss = critic_loss(D, G, real)
    scaler.scale(d_loss).backward()
    scaler.unscale_(opt_d)
    torch.nn.utils.clip_grad_norm_(D.parameters(), 1.0)
    scaler.step(opt_d)  # expect: SF404
    with torch.autocast("cuda"):
        g_loss = generator_loss(D, G)
    scaler.scale(g_loss).backward()
    scaler.unscale_(opt_g)
    torch.nn.utils.clip_grad_norm_(G.parameters(), 1.0)
    scaler.step(opt_g)  # expect: SF404
    scaler.update()
