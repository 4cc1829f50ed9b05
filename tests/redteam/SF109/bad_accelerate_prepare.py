"""Accelerate script: adapters applied by a same-file helper, the optimizer over all parameters."""
import torch
from accelerate import Accelerator
from torch import nn


class Adapter(nn.Module):
    def __init__(self, layer, hidden=32):
        super().__init__()
        self.layer = layer
        self.down = nn.Linear(layer.out_features, hidden)
        self.up = nn.Linear(hidden, layer.out_features)

    def forward(self, x):
        y = self.layer(x)
        return y + self.up(torch.relu(self.down(y)))


def add_adapters(model):
    for block in model.encoder.layer:
        block.output.dense = Adapter(block.output.dense)
    return model


def main(model, loader):
    accelerator = Accelerator()
    model = add_adapters(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)  # expect: SF109
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
