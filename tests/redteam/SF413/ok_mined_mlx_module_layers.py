"""Mined (MLX language model test): mlx.nn modules discover list attributes themselves; not torch."""
import mlx.core as mx
import mlx.nn as nn


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(16, 8)
        self.layers = [nn.Linear(8, 8) for _ in range(2)]
        self.out = nn.Linear(8, 16)

    def __call__(self, x: mx.array) -> mx.array:
        h = self.embedding(x)
        for layer in self.layers:
            h = nn.gelu(layer(h))
        return self.out(h)
