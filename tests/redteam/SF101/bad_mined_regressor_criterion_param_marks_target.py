"""Mined shape: an sklearn-style regressor takes its criterion as a constructor parameter (default MSELoss) and keeps it
on `self`; the training function builds it with a weighted-error loss class of the file whose `forward` makes the
target require grad when it does not already (bad: the loss only does arithmetic on the target and nothing reads its
gradient)."""
import torch
import torch.nn as nn


class WeightedSquaredError(nn.Module):
    def forward(self, estimate, observed, weight):
        if not estimate.requires_grad:
            estimate.requires_grad_(True)
        if not observed.requires_grad:
            observed.requires_grad_(True)  # expect: SF101
        return torch.mean(weight * (estimate - observed) ** 2)


class FlowRegressor:
    def __init__(self, net, criterion=nn.MSELoss(), lr=1e-3, epochs=500):
        self.net = net
        self.criterion = criterion
        self.epochs = epochs
        self.opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-2)

    def fit(self, features, flow, weight):
        features = torch.from_numpy(features).float()
        flow = torch.from_numpy(flow).float()
        for _ in range(self.epochs):
            self.opt.zero_grad()
            estimate = self.net(features)
            if isinstance(self.criterion, nn.MSELoss):
                loss = self.criterion(estimate, flow)
            else:
                loss = self.criterion(estimate, flow, weight)
            loss.backward()
            self.opt.step()
        return self


def train(net, features, flow, weight, weighted=True):
    objective = WeightedSquaredError() if weighted else nn.MSELoss()
    return FlowRegressor(net, criterion=objective).fit(features, flow, weight)
