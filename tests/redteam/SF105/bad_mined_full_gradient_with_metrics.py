"""Mined shape: full gradient plus running metrics: one zeros_like buffer per parameter summed with add_ on every batch of the loader, regularised loss (bad)."""
import torch


def gradient_and_metrics(model, loader, device, reg_lambda, loss_fn):
    buffers = [torch.zeros_like(p) for p in model.parameters()]  # expect: SF105
    metrics = {"loss": 0.0}
    count = 0
    for inputs, teacher in loader:
        inputs, teacher = inputs.to(device), teacher.to(device)
        n = inputs.shape[0]
        model.zero_grad()
        outputs = model(inputs)
        penalty = reg_lambda * sum(p.pow(2).sum() for p in model.parameters())
        loss = loss_fn(outputs, teacher) + penalty
        loss.backward()
        for buf, p in zip(buffers, model.parameters()):
            buf.add_(p.grad.detach(), alpha=n)
        metrics["loss"] += loss.item() * n
        count += n
    return [buf / count for buf in buffers], {k: v / count for k, v in metrics.items()}


def compare(model, loader, device):
    grads, stats = gradient_and_metrics(model, loader, device, 1e-4, torch.nn.functional.cross_entropy)
    print(stats, max(g.abs().max().item() for g in grads))
