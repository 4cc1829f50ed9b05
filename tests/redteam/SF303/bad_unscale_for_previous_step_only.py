"""The unscale belongs to the first optimizer's step; the second optimizer's clip is scaled."""
import torch

scaler = torch.amp.GradScaler("cuda")
for batch in loader:
    with torch.autocast("cuda"):
        loss_a, loss_b = model(batch)
    scaler.scale(loss_a + loss_b).backward()
    scaler.unscale_(opt_a)
    torch.nn.utils.clip_grad_norm_(model.a.parameters(), 1.0)
    scaler.step(opt_a)
    torch.nn.utils.clip_grad_norm_(model.b.parameters(), 1.0)  # expect: SF303
    scaler.step(opt_b)
    scaler.update()
