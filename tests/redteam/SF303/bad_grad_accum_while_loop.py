"""A while loop with gradient accumulation clips the scaled gradients on the update step."""
import torch

scaler = torch.amp.GradScaler("cuda")
step = 0
while step < total_steps:
    batch = next(data)
    with torch.autocast("cuda"):
        loss = model(batch) / accum
    scaler.scale(loss).backward()
    if (step + 1) % accum == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # expect: SF303
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    step += 1
