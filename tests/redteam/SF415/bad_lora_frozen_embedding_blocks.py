"""A LoRA language model: the embedding is frozen with requires_grad_(False); every block is checkpointed with the old default."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, blocks):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.tok.requires_grad_(False)
        self.first = blocks[0]
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids)
        x = checkpoint(self.first, x)  # expect: SF415
        return self.lm_head(x)
