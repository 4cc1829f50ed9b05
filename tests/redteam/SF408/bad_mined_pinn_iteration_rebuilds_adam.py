"""Mined (physics-informed field extrapolation): each iteration of a method's loop builds Adam right before zero_grad/backward/step."""
import torch


class FieldSolver:
    def __init__(self, model, lr, iterations, weights):
        self.model = model
        self.lr = lr
        self.iterations = iterations
        self.weights = weights

    def fit(self, coords, observed, residual_fn):
        for i in range(self.iterations):
            pred = self.model(coords)
            loss = self.weights[0] * (pred - observed).pow(2).mean() + self.weights[1] * residual_fn(pred).pow(2).mean()
            optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)  # expect: SF408
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return self.model(coords).detach()
