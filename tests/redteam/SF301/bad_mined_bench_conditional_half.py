"""Mined (GPT benchmark script): the autocast dtype falls back to float16 when bf16 is unsupported, and the loop trains with no scaler."""
from contextlib import nullcontext

import torch

amp_name = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
where = "cuda" if torch.cuda.is_available() else "cpu"
amp_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[amp_name]
region = nullcontext() if where == "cpu" else torch.amp.autocast(device_type=where, dtype=amp_dtype)  # expect: SF301

net = torch.nn.Linear(64, 64).to(where)
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
for it in range(20):
    batch = torch.randn(8, 64, device=where)
    with region:
        loss = net(batch).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
