"""nanoGPT style: the scaler is built enabled when the dtype is float16."""
import torch

dtype = "float16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = torch.amp.autocast(device_type="cuda", dtype=ptdtype)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
for it in range(max_iters):
    with ctx:
        logits, loss = model(X, Y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
