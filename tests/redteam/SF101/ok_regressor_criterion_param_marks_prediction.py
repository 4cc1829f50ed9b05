"""Near miss of bad_mined_regressor_criterion_param_marks_target: the loss handed to the regressor's constructor only
makes sure the *estimate* requires grad (a no-op on a model output); the observed flow is left alone (legitimate)."""
import torch
import torch.nn as nn


class WeightedSquaredError(nn.Module):
    def forward(self, estimate, observed, weight):
        if not estimate.requires_grad:
            estimate.requires_grad_(True)
        return torch.mean(weight * (estimate - observed) ** 2)


class FlowRegressor:
    def __init__(self, net, criterion=nn.MSELoss(), lr=1e-3, epochs=500):
        self.net = net
        self.criterion = criterion
        self.epochs = epochs
        self.opt = torch.optim.Adam(net.parameters(), lr=lr)

    def fit(self, features, flow, weight):
        features = torch.from_numpy(features).float()
        flow = torch.from_numpy(flow).float()
        for _ in range(self.epochs):
            self.opt.zero_grad()
            loss = self.criterion(self.net(features), flow, weight)
            loss.backward()
            self.opt.step()
        return self


def train(net, features, flow, weight):
    return FlowRegressor(net, criterion=WeightedSquaredError()).fit(features, flow, weight)
