"""Mined (NVIDIA/apex#1105, mixed-precision transformer training): per-head attention scores masked with -1e10."""
import math

import torch


class Head(torch.nn.Module):
    def forward(self, q, k, v, head_mask):
        attn_scores_head = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        attn_scores_head = attn_scores_head.masked_fill(head_mask == 0, -1e10)  # expect: SF306
        return attn_scores_head.softmax(-1) @ v


for batch in loader:
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = model(batch).loss
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
