"""Near miss: a self-attention module of the file (it builds layers) takes the same hidden states as
queries and context and its output is backpropagated: a model, not a loss comparing a tensor with itself."""
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)

    def forward(self, queries, context):
        scores = self.query(queries) @ self.key(context).transpose(-1, -2)
        return (scores.softmax(-1) @ context).pow(2).mean()


def fit(encoder, batches, optimizer, width=32):
    mixer = SelfAttention(width)
    for tokens in batches:
        hidden = encoder(tokens)
        penalty = mixer(hidden, hidden)
        optimizer.zero_grad()
        penalty.backward()
        optimizer.step()
