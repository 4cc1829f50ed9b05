"""Near miss of bad_mined_importance_mask_alias_call: the scoring function is still picked into a local and called
through it, but the caller keeps its per-parameter sums on the object as state for a later penalty (the consumer
decides where they live, silent)."""
import torch


def gradient_importance(model, loader, num_samples, device, reduce):
    importance = {}
    for name, param in model.named_parameters():
        importance[name] = torch.zeros_like(param).to(device)
    for index, (inputs, labels) in enumerate(loader):
        if index >= num_samples:
            break
        torch.nn.functional.cross_entropy(model(inputs), labels).backward()
        for name, param in model.named_parameters():
            importance[name] += reduce(param.grad).data
        model.zero_grad()
    return importance


def uniform_importance(model, loader, num_samples, device, reduce):
    return {name: torch.ones_like(param) for name, param in model.named_parameters()}


class ImportancePenalty:
    def __init__(self, model, by_gradient=True):
        self.model = model
        self.by_gradient = by_gradient

    def consolidate(self, loader, num_samples, device):
        if self.by_gradient:
            score = gradient_importance
        else:
            score = uniform_importance
        self.importance = score(self.model, loader, num_samples, device, torch.square)
