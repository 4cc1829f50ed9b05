"""Mined shape: an optimiser over a parameter manifold computes the full-loader gradient each step by adding the
flattened `p.grad` of every batch into `torch.zeros(dim, device=device)` and dividing it by the number of batches
(bad: a model-sized sum kept on the accelerator across the whole loader)."""
import torch


class ManifoldFlow:
    def __init__(self, model, loss_fn, dim, evolve):
        self.model = model
        self.loss_fn = loss_fn
        self.dim = dim
        self.evolve = evolve

    def full_gradient_step(self, state, loader, device):
        self.model.train()
        running = 0.0
        flat_sum = torch.zeros(self.dim, device=device)
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            self.model.zero_grad()
            loss = self.loss_fn(self.model(inputs), targets)
            loss.backward()
            running += loss.item()
            flat_sum += torch.cat([p.grad.flatten() for p in self.model.parameters()])  # expect: SF105
        mean_gradient = flat_sum / len(loader)
        return self.evolve(state, running / len(loader), mean_gradient)
