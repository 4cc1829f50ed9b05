"""Near miss: a self-attention module of another package takes the same hidden states as queries and
context; its output is reduced before the backward pass, as a layer's output is, so it is no loss
comparing a tensor with itself."""
from attention_blocks import SelfAttention


def fit(encoder, batches, optimizer, width=32):
    mixer = SelfAttention(width)
    for tokens in batches:
        hidden = encoder(tokens)
        mixed = mixer(hidden, hidden)
        penalty = mixed.pow(2).mean()
        optimizer.zero_grad()
        penalty.backward()
        optimizer.step()
