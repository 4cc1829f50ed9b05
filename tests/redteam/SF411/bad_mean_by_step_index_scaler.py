"""AMP accumulation: the scaled loss is divided by the step index + 1 (meant as 'mean so far')."""
import torch

scaler = torch.amp.GradScaler("cuda")
for step, batch in enumerate(train_loader):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss / (step + 1)).backward()  # expect: SF411
    if (step + 1) % grad_accum == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
