"""Near miss of bad_mined_weighted_bce_function_marks_target: the hand-written objective makes the batch it receives
require grad because it differentiates the energy with respect to it (a gradient penalty), so the gradient is read
inside the function (silent)."""
import torch


def energy_objective(energies, inputs, targets):
    inputs.requires_grad_(True)
    energy = energies(inputs)
    (slope,) = torch.autograd.grad(energy.sum(), inputs, create_graph=True)
    return ((energy - targets) ** 2).mean() + 0.1 * slope.pow(2).sum(dim=1).mean()


def fit(energies, loader, optimizer):
    for inputs, targets in loader:
        loss = energy_objective(energies, inputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
