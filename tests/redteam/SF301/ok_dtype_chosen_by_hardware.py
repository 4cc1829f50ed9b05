"""Dtype chosen by hardware (must stay silent)."""
import torch

amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
for batch in loader:
    with torch.autocast("cuda", dtype=amp_dtype):
        loss = model(batch)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
