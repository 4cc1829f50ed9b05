"""Near miss of bad_mined_pruning_score_autograd_flat_sum: the flat gradient sum starts as a float32 CPU tensor and
each batch's concatenated gradient is moved there before the add (silent)."""
import torch


def gradient_signal_norm(model, loader, device, criterion):
    size = sum(p.numel() for p in model.parameters())
    reference = torch.zeros(size, device="cpu", dtype=torch.float32)
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        grads = torch.autograd.grad(criterion(model(inputs), labels), model.parameters())
        reference += torch.cat([g.reshape(-1) for g in grads]).float().cpu()
    return reference.norm().item()
