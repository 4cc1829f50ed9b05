"""A flax.linen module keeps a dict of Dense heads: flax registers them, and it is not torch."""
import flax.linen as nn


class MultiHead(nn.Module):
    outputs: dict

    def setup(self):
        self.heads = {k: nn.Dense(features=v) for k, v in self.outputs.items()}

    def __call__(self, x):
        return {k: head(x) for k, head in self.heads.items()}
