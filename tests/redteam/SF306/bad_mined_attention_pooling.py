"""Mined (an audio classifier's attention pooling): scores masked with -inf where the attention mask is 0."""
import torch


class AttentionPooling(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.attn = torch.nn.Linear(hidden, 1)

    def forward(self, hs, attention_mask=None):
        scores = self.attn(hs).squeeze(-1)
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask == 0, float("-inf"))  # expect: SF306
        weights = torch.softmax(scores, dim=1).unsqueeze(-1)
        return (hs * weights).sum(dim=1)
