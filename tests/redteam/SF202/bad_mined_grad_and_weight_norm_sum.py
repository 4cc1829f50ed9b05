"""Mined shape: a training loop sums `param.grad.norm().item()` and `param.data.norm().item()` over every parameter on every step to log gradient and weight norms (bad)."""
import logging

import torch


def train(model, loader, optimizer, criterion, epochs, device="cuda"):
    metrics = {"grad": [], "weight": []}
    for epoch in range(epochs):
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            grad_norm = 0.0
            weight_norm = 0.0
            for param in model.parameters():
                if param.grad is not None:
                    grad_norm += param.grad.norm().item()  # expect: SF202
                weight_norm += param.data.norm().item()  # expect: SF202
            metrics["grad"].append(grad_norm)
            metrics["weight"].append(weight_norm)
            if grad_norm > 10:
                logging.warning("large gradient norm %s", grad_norm)
            optimizer.step()
    return metrics
