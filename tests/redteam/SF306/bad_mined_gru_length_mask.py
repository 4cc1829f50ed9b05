"""Mined (a GRU classifier with attention pooling): positions beyond each length filled with -inf, then softmax over time."""
import torch
import torch.nn.functional as F


class AttnGRU(torch.nn.Module):
    def forward(self, seq, lengths):
        out, _ = self.gru(seq)
        scores = self.attention(out).squeeze(-1)
        valid = torch.arange(out.size(1), device=out.device)[None, :] < lengths[:, None]
        scores = scores.masked_fill(~valid, float("-inf"))  # expect: SF306
        weights = F.softmax(scores, dim=1)
        return self.classifier(torch.bmm(weights.unsqueeze(1), out).squeeze(1))
