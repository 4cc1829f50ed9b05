"""Near miss of bad_mined_pruning_score_autograd_flat_sum: the gradients summed from None are taken with respect to
the inputs of each batch (a saliency sum the size of one input batch), not the model's parameters (silent)."""
import torch


def input_saliency(model, loader, criterion):
    saliency = None
    for inputs, labels in loader:
        inputs = inputs.clone().requires_grad_(True)
        grads = torch.autograd.grad(criterion(model(inputs), labels), [inputs])
        if saliency is None:
            saliency = torch.cat([g.reshape(-1) for g in grads]).detach()
        else:
            saliency += torch.cat([g.reshape(-1) for g in grads])
    return saliency
