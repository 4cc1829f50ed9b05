"""Two clips (encoder and decoder) before one scaler step; neither sees unscaled gradients."""
import torch

scaler = torch.amp.GradScaler("cuda")
for src, tgt in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = seq2seq(src, tgt)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(seq2seq.encoder.parameters(), 1.0)  # expect: SF303
    torch.nn.utils.clip_grad_norm_(seq2seq.decoder.parameters(), 1.0)  # expect: SF303
    scaler.step(optimizer)
    scaler.update()
