"""Dtype chosen by hardware, with a GradScaler enabled for the float16 fallback (nanoGPT's pattern; must stay silent)."""
import torch

dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
for batch in loader:
    with torch.autocast("cuda", dtype=ptdtype):
        loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
