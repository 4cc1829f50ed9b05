"""The embedding frozen in a loop over its parameters; the positional sum is checkpointed into the encoder."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Model(nn.Module):
    def __init__(self, vocab, dim, encoder):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        for p in self.emb.parameters():
            p.requires_grad = False
        self.encoder = encoder

    def forward(self, tokens):
        h = self.emb(tokens)
        return checkpoint(self.encoder, h, use_reentrant=True)  # expect: SF415
