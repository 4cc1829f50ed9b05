"""Near miss: the same probe adds `param.grad.detach().cpu()` into host dict entries allocated on the CPU
(legitimate)."""
import torch


def aggregated_gradients(model, loader, criterion):
    aggregated = {name: torch.zeros_like(param, device="cpu") for name, param in model.named_parameters()}
    for inputs, labels in loader:
        model.zero_grad()
        criterion(model(inputs.cuda()), labels.cuda().float()).backward()
        for name, param in model.named_parameters():
            if param.grad is not None:
                aggregated[name] += param.grad.detach().cpu()
    return {name: value / len(loader) for name, value in aggregated.items()}
