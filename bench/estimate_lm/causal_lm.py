"""A ~1B-parameter Llama-style causal LM in plain torch, for `stabfix verify --estimate` (bench).

Built from a config, no weights, no downloads. `build_verify(device, batch_size=4)` follows verify's
entry contract plus the optional `batch_size` keyword the estimate uses for the half-micro-batch
variant. `SMALL=1` in the environment gives a tiny config of the same code (for a real CPU run).
"""

import math
import os

import torch
import torch.nn.functional as F
from torch import nn

CONFIG_1B = dict(vocab=32000, dim=2048, layers=18, heads=16, hidden=5632, seq=2048)
CONFIG_SMALL = dict(vocab=512, dim=64, layers=2, heads=4, hidden=176, seq=64)


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c["heads"]
        self.attn_norm = RMSNorm(c["dim"])
        self.qkv = nn.Linear(c["dim"], 3 * c["dim"], bias=False)
        self.proj = nn.Linear(c["dim"], c["dim"], bias=False)
        self.mlp_norm = RMSNorm(c["dim"])
        self.gate = nn.Linear(c["dim"], c["hidden"], bias=False)
        self.up = nn.Linear(c["dim"], c["hidden"], bias=False)
        self.down = nn.Linear(c["hidden"], c["dim"], bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["dim"])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["dim"])
        self.lm_head = nn.Linear(c["dim"], c["vocab"], bias=False)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=1 / math.sqrt(p.shape[1]))

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))


def build_verify(device, batch_size=4):
    c = CONFIG_SMALL if os.environ.get("SMALL") else CONFIG_1B
    model = CausalLM(c).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    ids = torch.randint(0, c["vocab"], (batch_size, c["seq"] + 1), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step


def make_model():
    """The 1B model alone (for a peer tool's `--model causal_lm:make_model`)."""
    return CausalLM(CONFIG_SMALL if os.environ.get("SMALL") else CONFIG_1B)
