"""Mined shape: a gradient-signal pruning score first sums, over the whole loader, the flattened gradients that
`torch.autograd.grad(loss, model.parameters())` returns into `reference` (None at first, then the first flat
gradient, then added into), and uses it in a second pass (bad: a model-sized sum on the accelerator across batches)."""
import torch


def gradient_signal_scores(model, loader, device, criterion):
    reference = None
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        grads = torch.autograd.grad(criterion(model(inputs), labels), model.parameters())
        if reference is None:
            reference = torch.cat([g.reshape(-1) for g in grads]).detach()
        else:
            reference += torch.cat([g.reshape(-1) for g in grads])  # expect: SF105
    scores = {}
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        grads = torch.autograd.grad(criterion(model(inputs), labels), model.parameters(), create_graph=True)
        (reference * torch.cat([g.reshape(-1) for g in grads])).sum().backward()
        for name, param in model.named_parameters():
            scores[name] = (param.grad * param.data).abs().detach()
            param.grad.zero_()
    return scores
