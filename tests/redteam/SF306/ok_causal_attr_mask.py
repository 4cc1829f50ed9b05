"""A causal mask built with triu in __init__ and kept on self, -inf fill, softmax."""
import torch


class Decoder(torch.nn.Module):
    def __init__(self, max_len):
        super().__init__()
        self.future = torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=1)

    def forward(self, scores):
        n = scores.size(-1)
        scores = scores.masked_fill(self.future[:n, :n], float("-inf"))
        return scores.softmax(-1)
