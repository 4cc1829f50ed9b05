"""Dtype chosen by hardware: bfloat16 where supported, else float16 with no scaler. The fallback runs on
every GPU without bfloat16 (V100, T4); nanoGPT, which this spelling comes from, pairs it with
`GradScaler(enabled=(dtype == "float16"))` for exactly that path (was an ok case; judged an instance in i19-misses2)."""
import torch

amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
for batch in loader:
    with torch.autocast("cuda", dtype=amp_dtype):  # expect: SF301
        loss = model(batch)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
