"""The low-rank weights live in a second module class that the wrapper holds."""
import torch


class LowRankDelta(torch.nn.Module):
    def __init__(self, d_in, d_out, rank):
        super().__init__()
        self.A = torch.nn.Parameter(torch.randn(d_in, rank) / rank)
        self.B = torch.nn.Parameter(torch.zeros(rank, d_out))

    def forward(self, x):
        return x @ self.A @ self.B


class WithDelta(torch.nn.Module):
    def __init__(self, layer, rank):
        super().__init__()
        self.layer = layer
        self.delta = LowRankDelta(layer.in_features, layer.out_features, rank)

    def forward(self, x):
        return self.layer(x) + self.delta(x)


def run(model, data, steps):
    for i, block in enumerate(model.blocks):
        block.mlp = WithDelta(block.mlp, 8)
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01)  # expect: SF109
    for step in range(steps):
        loss = model(data[step]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
